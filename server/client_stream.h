// File: server/client_stream.h
//
// A client's byte stream: a plain TCP or unix-domain socket, or TLS over TCP (tls-port). The connection,
// the dispatcher's early flushes and blocking commands' waits read and write through it, so
// one implementation of the connection serves both kinds of port.
//
// Not virtual: each operation is one predictable branch on `tls_`, and both branches return
// the same awaitable type, so the plain path costs what a bare socket costs (no extra
// coroutine frame, no indirect call). bench/compare scenario 18 measures it.
//
// Threading: used only on the connection's thread. Asio's ssl::stream allows one read and
// one write in flight at once, as the socket does; nothing here starts a second of either.
#pragma once

#include <boost/asio/ssl.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "server/asio.h"

namespace lapse::server {

// Where a client came from, as CLIENT LIST shows it.
struct ClientPeer {
  std::string addr;   // "ip:port", or the unix socket's path and ":0"
  std::string laddr;  // the same for the server's end
  bool local = false;  // loopback or the unix socket: protected mode and enable-debug-command local let it in
  bool unix_socket = false;
};

class ClientStream {
 public:
  // Either family of stream socket: TCP (port, tls-port) or unix-domain (unixsocket).
  using Socket = asio::generic::stream_protocol::socket;
  using TlsStream = asio::ssl::stream<Socket&>;
  // A TLS stream that has yet to Handshake() when `context` is set (kept alive for as long as
  // the stream lives); a plain one otherwise.
  explicit ClientStream(Socket socket, std::shared_ptr<asio::ssl::context> context = nullptr);
  ClientStream(const ClientStream&) = delete;
  ClientStream& operator=(const ClientStream&) = delete;

  Socket& socket() { return socket_; }
  const Socket& socket() const { return socket_; }
  bool tls() const { return tls_ != nullptr; }
  bool is_open() const { return socket_.is_open(); }

  // tls-auth-clients for this connection (before Handshake): whether a client certificate
  // is required, asked for, or neither.
  enum class PeerCheck { kRequire, kOptional, kNone };
  // The TLS handshake; false (and *error says why) when it failed.
  awaitable<bool> Handshake(PeerCheck check, std::string* error);

  awaitable<size_t> ReadSome(asio::mutable_buffer buffer, boost::system::error_code& ec) {
    if (tls_) [[unlikely]] return tls_->async_read_some(buffer, asio::redirect_error(use_awaitable, ec));
    return socket_.async_read_some(buffer, asio::redirect_error(use_awaitable, ec));
  }
  awaitable<size_t> Write(asio::const_buffer buffer, boost::system::error_code& ec) {
    if (tls_) [[unlikely]] return asio::async_write(*tls_, buffer, asio::redirect_error(use_awaitable, ec));
    return asio::async_write(socket_, buffer, asio::redirect_error(use_awaitable, ec));
  }
  // Writes what the socket takes now without blocking (the socket is non-blocking). TLS
  // takes nothing this way, since a record cut short would corrupt the stream: the caller
  // then leaves the bytes to its coroutine's Write.
  size_t TryWrite(asio::const_buffer buffer, boost::system::error_code& ec);

  // Reads what the client sends while a blocking command waits, as Redis keeps reading a
  // blocked client: `on_data` gets each chunk and answers whether to go on reading;
  // `on_closed` is called once when the client disconnects or the read fails.
  // StopWatching ends it; after it returns neither callback runs again.
  void Watch(std::function<bool(std::string_view)> on_data, std::function<void()> on_closed);
  awaitable<void> StopWatching();

  // Ends every operation in progress (they complete with operation_aborted).
  void Cancel() {
    boost::system::error_code ignored;
    socket_.cancel(ignored);
  }
  void Close() {
    boost::system::error_code ignored;
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  struct WatchState;
  static void WatchPlain(Socket* socket, std::shared_ptr<WatchState> state);
  void WatchTls(std::shared_ptr<WatchState> state);

  Socket socket_;
  std::shared_ptr<asio::ssl::context> context_;
  std::unique_ptr<TlsStream> tls_;
  std::shared_ptr<WatchState> watch_;
};

}  // namespace lapse::server
