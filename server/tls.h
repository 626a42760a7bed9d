// File: server/tls.h
//
// The TLS server context, built from the tls-* settings as Redis 7.0 builds its own
// (src/tls.c): certificate chain, private key (tls-key-file-pass unlocks it), the CA that
// signs client certificates, allowed protocols (TLSv1.2 and TLSv1.3 unless tls-protocols
// says otherwise), cipher lists, server cipher preference and the session cache.
//
// Building never changes a context in use: CONFIG SET of a tls-* setting builds a new one
// from the candidate settings and installs it only when it is complete, so that a bad file
// leaves the server as it was. Connections hold a shared_ptr to the context they were
// accepted with; a reload affects only the connections accepted after it, as in Redis.
//
// What fails is logged as Redis logs it ("Failed to load certificate: <file>: <OpenSSL
// error>"), and the caller answers Redis's summary ("Failed to configure TLS. Check logs for
// more info." at start-up, "Unable to update TLS configuration. Check server logs." for
// CONFIG SET).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "server/asio.h"
#include "server/config.h"

namespace boost::asio::ssl {
class context;
}

namespace lapse::server {

// Builds a context from `s`, or returns nullptr after logging why (Redis's messages).
std::shared_ptr<asio::ssl::context> BuildTlsContext(const Settings& s);

// True when any setting the context is built from differs between `a` and `b`.
bool TlsContextSettingsDiffer(const Settings& a, const Settings& b);

// The name of the tls-* setting among `names` that Redis would name in a failed reload's
// error: the first, in the order given, that makes Redis configure TLS again (tls-port or one
// the context is built from).
std::optional<std::string_view> FirstTlsContextSetting(const std::vector<std::string_view>& names);

// The context new TLS connections get; swapped whole by a reload, from any thread.
class TlsContextHolder {
 public:
  std::shared_ptr<asio::ssl::context> Get() const {
    std::lock_guard lock(mu_);
    return context_;
  }
  void Set(std::shared_ptr<asio::ssl::context> context) {
    std::lock_guard lock(mu_);
    context_ = std::move(context);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<asio::ssl::context> context_;
};

}  // namespace lapse::server
