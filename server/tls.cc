#include "server/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <boost/asio/ssl.hpp>
#include <sstream>

#include "protocol/arg_reader.h"

namespace lapse::server {

namespace {

// OpenSSL's description of the error that just happened ("error:80000002:system
// library::No such file or directory"), as Redis logs it.
std::string LastOpenSslError() {
  char buf[256];
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

// tls-protocols: the SSL_OP_NO_* options that leave only the named protocols; nullopt for
// an unknown name. Empty means Redis's default, TLSv1.2 and TLSv1.3.
std::optional<long> ProtocolOptions(std::string_view protocols) {
  bool v1 = false, v11 = false, v12 = false, v13 = false;
  std::istringstream words{protocol::AsciiLower(protocols)};
  std::string word;
  bool any = false;
  while (words >> word) {
    any = true;
    if (word == "tlsv1") v1 = true;
    else if (word == "tlsv1.1") v11 = true;
    else if (word == "tlsv1.2") v12 = true;
    else if (word == "tlsv1.3") v13 = true;
    else return std::nullopt;
  }
  if (!any) v12 = v13 = true;
  long options = 0;
  if (!v1) options |= SSL_OP_NO_TLSv1;
  if (!v11) options |= SSL_OP_NO_TLSv1_1;
  if (!v12) options |= SSL_OP_NO_TLSv1_2;
  if (!v13) options |= SSL_OP_NO_TLSv1_3;
  return options;
}

// The private key's passphrase, handed to OpenSSL only while the key file is read.
int KeyPassword(char* buf, int size, int, void* user) {
  const std::string* pass = static_cast<const std::string*>(user);
  if (pass == nullptr || pass->empty()) return 0;
  int n = std::min(size - 1, static_cast<int>(pass->size()));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  buf[n] = '\0';
  return n;
}

bool LoadCertificateAndKey(SSL_CTX* ctx, const Settings& s) {
  if (SSL_CTX_use_certificate_chain_file(ctx, s.tls_cert_file.c_str()) <= 0) {
    spdlog::warn("Failed to load certificate: {}: {}", s.tls_cert_file, LastOpenSslError());
    return false;
  }
  SSL_CTX_set_default_passwd_cb(ctx, KeyPassword);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(&s.tls_key_file_pass));
  bool key_ok = SSL_CTX_use_PrivateKey_file(ctx, s.tls_key_file.c_str(), SSL_FILETYPE_PEM) > 0;
  // The settings may go away; OpenSSL must not keep a pointer into them.
  SSL_CTX_set_default_passwd_cb(ctx, nullptr);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
  if (!key_ok) {
    spdlog::warn("Failed to load private key: {}: {}", s.tls_key_file, LastOpenSslError());
    return false;
  }
  return true;
}

bool LoadCertificateAuthority(SSL_CTX* ctx, const Settings& s) {
  const char* file = s.tls_ca_cert_file.empty() ? nullptr : s.tls_ca_cert_file.c_str();
  const char* dir = s.tls_ca_cert_dir.empty() ? nullptr : s.tls_ca_cert_dir.c_str();
  if (file == nullptr && dir == nullptr) return true;
  if (SSL_CTX_load_verify_locations(ctx, file, dir) <= 0) {
    spdlog::warn("Failed to configure CA certificate(s) file/directory: {}", LastOpenSslError());
    return false;
  }
  return true;
}

bool ConfigureCiphers(SSL_CTX* ctx, const Settings& s) {
  if (!s.tls_ciphers.empty() && !SSL_CTX_set_cipher_list(ctx, s.tls_ciphers.c_str())) {
    spdlog::warn("Failed to configure ciphers: {}", s.tls_ciphers);
    ERR_clear_error();
    return false;
  }
  if (!s.tls_ciphersuites.empty() && !SSL_CTX_set_ciphersuites(ctx, s.tls_ciphersuites.c_str())) {
    spdlog::warn("Failed to configure ciphersuites: {}", s.tls_ciphersuites);
    ERR_clear_error();
    return false;
  }
  return true;
}

// Protocols, cipher preference and the session cache: the options Redis sets.
bool ConfigureSession(SSL_CTX* ctx, const Settings& s) {
  std::optional<long> protocols = ProtocolOptions(s.tls_protocols);
  if (!protocols) {
    spdlog::warn("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
    return false;
  }
  long options = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_SINGLE_DH_USE | *protocols;
#ifdef SSL_OP_NO_CLIENT_RENEGOTIATION
  options |= SSL_OP_NO_CLIENT_RENEGOTIATION;
#endif
  if (s.tls_prefer_server_ciphers) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, options);
  if (s.tls_session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, s.tls_session_cache_size);
    SSL_CTX_set_timeout(ctx, static_cast<long>(s.tls_session_cache_timeout));
    static constexpr unsigned char kSessionContext[] = "lapse";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  // A write that returns early must be allowed to resume from a buffer that moved (the
  // output string may grow between tries).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return true;
}

}  // namespace

std::shared_ptr<asio::ssl::context> BuildTlsContext(const Settings& s) {
  if (s.tls_cert_file.empty()) {
    spdlog::warn("No tls-cert-file configured!");
    return nullptr;
  }
  if (s.tls_key_file.empty()) {
    spdlog::warn("No tls-key-file configured!");
    return nullptr;
  }
  if (s.tls_auth_clients != Settings::TlsAuthClients::kNo && s.tls_ca_cert_file.empty() && s.tls_ca_cert_dir.empty()) {
    spdlog::warn("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or "
                 "tls-auth-clients are enabled!");
    return nullptr;
  }
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  // Asking for a certificate is decided per connection (tls-auth-clients may change);
  // this is the strictest mode, which a connection relaxes.
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  if (!ConfigureSession(ctx, s) || !LoadCertificateAndKey(ctx, s) || !LoadCertificateAuthority(ctx, s) ||
      !ConfigureCiphers(ctx, s)) {
    return nullptr;
  }
  return context;
}

bool TlsContextSettingsDiffer(const Settings& a, const Settings& b) {
  return a.tls_cert_file != b.tls_cert_file || a.tls_key_file != b.tls_key_file ||
         a.tls_key_file_pass != b.tls_key_file_pass || a.tls_ca_cert_file != b.tls_ca_cert_file ||
         a.tls_ca_cert_dir != b.tls_ca_cert_dir || a.tls_protocols != b.tls_protocols || a.tls_ciphers != b.tls_ciphers ||
         a.tls_ciphersuites != b.tls_ciphersuites || a.tls_prefer_server_ciphers != b.tls_prefer_server_ciphers ||
         a.tls_session_caching != b.tls_session_caching || a.tls_session_cache_size != b.tls_session_cache_size ||
         a.tls_session_cache_timeout != b.tls_session_cache_timeout;
}

std::optional<std::string_view> FirstTlsContextSetting(const std::vector<std::string_view>& names) {
  static constexpr std::string_view kContextSettings[] = {
      "tls-port",         "tls-cert-file",    "tls-key-file",     "tls-key-file-pass",         "tls-ca-cert-file",
      "tls-ca-cert-dir",  "tls-protocols",    "tls-ciphers",               "tls-ciphersuites",
      "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size", "tls-session-cache-timeout"};
  for (std::string_view name : names) {
    std::string lower = protocol::AsciiLower(name);
    for (std::string_view s : kContextSettings) {
      if (lower == s) return name;
    }
  }
  return std::nullopt;
}

}  // namespace lapse::server
