#include "server/client_stream.h"

#include <sys/socket.h>

#include <cerrno>

namespace lapse::server {

// One watch of a blocked client's input. A plain socket is watched for readability and read
// with recv, so that ending the watch never loses bytes: the wait holds none. A TLS stream
// can only be read through OpenSSL, which may already hold decrypted bytes the socket no
// longer shows, so a read is kept in flight instead, and StopWatching waits for it to end
// and hand over what it read.
struct ClientStream::WatchState {
  std::function<bool(std::string_view)> on_data;
  std::function<void()> on_closed;
  bool active = true;
  bool reading = false;                  // a TLS read is in flight
  asio::steady_timer* stopped = nullptr;  // StopWatching's wait for that read
  char chunk[16 * 1024];
};

ClientStream::ClientStream(Socket socket, std::shared_ptr<asio::ssl::context> context)
    : socket_(std::move(socket)), context_(std::move(context)) {
  if (context_) tls_ = std::make_unique<TlsStream>(socket_, *context_);
}

awaitable<bool> ClientStream::Handshake(PeerCheck check, std::string* error) {
  int mode = check == PeerCheck::kRequire    ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
             : check == PeerCheck::kOptional ? SSL_VERIFY_PEER
                                             : SSL_VERIFY_NONE;
  SSL_set_verify(tls_->native_handle(), mode, nullptr);
  boost::system::error_code ec;
  co_await tls_->async_handshake(asio::ssl::stream_base::server, asio::redirect_error(use_awaitable, ec));
  if (ec) *error = ec.message();
  co_return !ec;
}

size_t ClientStream::TryWrite(asio::const_buffer buffer, boost::system::error_code& ec) {
  ec = {};
  if (tls_) return 0;
  return socket_.write_some(buffer, ec);
}

void ClientStream::Watch(std::function<bool(std::string_view)> on_data, std::function<void()> on_closed) {
  watch_ = std::make_shared<WatchState>();
  watch_->on_data = std::move(on_data);
  watch_->on_closed = std::move(on_closed);
  if (tls_) {
    WatchTls(watch_);
  } else {
    WatchPlain(&socket_, watch_);
  }
}

void ClientStream::WatchPlain(Socket* socket, std::shared_ptr<WatchState> state) {
  socket->async_wait(Socket::wait_read, [socket, state](boost::system::error_code ec) {
    if (ec || !state->active) return;
    ssize_t n = ::recv(socket->native_handle(), state->chunk, sizeof state->chunk, MSG_DONTWAIT);
    if (n > 0) {
      if (state->on_data(std::string_view(state->chunk, static_cast<size_t>(n)))) WatchPlain(socket, state);
      return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return WatchPlain(socket, state);
    state->active = false;
    state->on_closed();
  });
}

void ClientStream::WatchTls(std::shared_ptr<WatchState> state) {
  state->reading = true;
  tls_->async_read_some(asio::buffer(state->chunk), [this, state](boost::system::error_code ec, size_t n) {
    state->reading = false;
    // Bytes taken from the stream are handed over even when the watch is ending: nobody
    // could read them again.
    bool more = n == 0 || state->on_data(std::string_view(state->chunk, n));
    if (state->stopped != nullptr) {
      state->stopped->cancel();
      return;
    }
    if (!state->active) return;
    if (ec) {
      state->active = false;
      state->on_closed();
      return;
    }
    if (more) WatchTls(state);
  });
}

awaitable<void> ClientStream::StopWatching() {
  std::shared_ptr<WatchState> state = std::move(watch_);
  if (state == nullptr) co_return;
  state->active = false;
  Cancel();
  if (!state->reading) co_return;
  // The TLS read ends with operation_aborted, or with bytes that arrived first.
  asio::steady_timer stopped(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
  state->stopped = &stopped;
  boost::system::error_code ec;
  co_await stopped.async_wait(asio::redirect_error(use_awaitable, ec));
}

}  // namespace lapse::server
