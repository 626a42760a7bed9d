#include "server/connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/blocking.h"
#include "server/server.h"
#include "server/transaction.h"

namespace lapse::server {

namespace {
constexpr size_t kReadChunk = 16 * 1024;
// Replies are written once they reach this much, even in the middle of a batch.
constexpr size_t kFlushAt = 256 * 1024;
// The most the input buffer grows ahead of a large bulk argument before its bytes arrive;
// beyond, it doubles as they come, so a client that announces 512 MB and sends nothing
// costs nothing.
constexpr size_t kMaxReadAhead = 16 * 1024 * 1024;
// A reply buffer that grew past this is let go of after its write rather than kept for reuse.
constexpr size_t kMaxKeptOutput = 1024 * 1024;
// What an empty std::string holds without allocating: growing from it is no expansion.
const size_t kInlineCapacity = std::string().capacity();

}  // namespace

Connection::Connection(Server& server, ClientStream::Socket socket, ClientPeer peer,
                       std::shared_ptr<asio::ssl::context> tls, size_t home_thread)
    : server_(server),
      stream_(std::move(socket), std::move(tls)),
      info_(server.clients().Add(std::move(peer.addr), std::move(peer.laddr), server.clock().NowMs(),
                                 static_cast<int>(stream_.socket().native_handle()), peer.unix_socket)),
      session_(home_thread, info_, server.acl().DefaultNeedsAuth()),
      dispatcher_(server, session_),
      unix_socket_(peer.unix_socket) {
  session_.local = peer.local;
  session_.stream = &stream_;
  // A new client is the default user's, whose rules may have been narrowed.
  server.acl().Attach(*info_, "default");
  ApplyLimits();
}

// While the connection waits for input it has nothing else to write, so the messages go out
// at once from here, without waking its coroutine. What the socket does not take now is left
// to the coroutine: the read is cancelled and the loop writes the rest before reading again.
// A connection suspended in a blocking command (BLPOP) has its wait write them.
void Connection::WakeForPush() {
  if (!reading_) {
    WakeBlockedForPush(*info_);
    return;
  }
  if (!push_leftover_.empty()) return;
  std::string bytes = info_->push.Take();
  if (bytes.empty()) return;
  boost::system::error_code ec;
  size_t written = stream_.TryWrite(asio::buffer(bytes), ec);
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return stream_.Cancel();
  ThreadCounters& counters = server_.counters(session_.home);
  counters.Bump(counters.writes_processed);
  counters.Bump(counters.net_output_bytes, written);
  if (written == bytes.size()) return;
  push_leftover_ = bytes.substr(written);
  stream_.Cancel();
}

void Connection::ApplyLimits() {
  protocol::ParserLimits limits;
  limits.max_bulk_len = static_cast<uint64_t>(server_.max_bulk_len());
  limits.unauthenticated = !session_.authenticated;
  parser_.set_limits(limits);
}

awaitable<void> Connection::Run() {
  auto self = shared_from_this();
  // A weak pointer: the registry's ClientInfo must not keep the connection alive, or a
  // connection still open at shutdown would form a cycle and never be freed.
  std::weak_ptr<Connection> weak = self;
  info_->kill = [weak] {
    auto conn = weak.lock();
    if (!conn) return;
    asio::post(conn->stream_.socket().get_executor(), [weak] {
      auto c = weak.lock();
      if (!c) return;
      c->stream_.Close();
      CancelBlock(*c->info_);
    });
  };
  // A message for this client wakes it from its read (WakeForPush); posted, since the
  // publisher runs on another thread.
  info_->push.SetWaker([weak, executor = stream_.socket().get_executor()] {
    asio::post(executor, [weak] {
      if (auto c = weak.lock()) c->WakeForPush();
    });
  });
  asio::co_spawn(stream_.socket().get_executor(), IdleWatchdog(self), asio::detached);
  boost::system::error_code ec;
  if (!unix_socket_) stream_.socket().set_option(tcp::no_delay(true), ec);
  // Writes outside the coroutine (WakeForPush) must never block the thread.
  stream_.socket().non_blocking(true, ec);
  ThreadCounters& counters = server_.counters(session_.home);

  bool open = !stream_.tls() || co_await Handshake();
  while (open && !session_.close_after_reply) {
    CompactInput();
    if (input_.size() - input_end_ < kReadChunk) {
      size_t want = input_end_ + std::clamp(parser_.bytes_hint(), kReadChunk, kMaxReadAhead);
      if (input_.size() < want) input_.resize(std::max(want, input_.size() * 2));
    }
    size_t n = 0;
    if (!session_.unread_input.empty()) {
      // What a blocking command's wait read from the socket comes first.
      if (input_.size() - input_end_ < session_.unread_input.size()) input_.resize(input_end_ + session_.unread_input.size());
      n = session_.unread_input.size();
      std::memcpy(input_.data() + input_end_, session_.unread_input.data(), n);
      session_.unread_input.clear();
      counters.Bump(counters.reads_processed);
    } else if (info_->push.empty() && push_leftover_.empty()) {
      reading_ = true;
      n = co_await stream_.ReadSome(asio::buffer(input_.data() + input_end_, input_.size() - input_end_), ec);
      reading_ = false;
      // A read cancelled by WakeForPush ends with nothing read: the messages are written below.
      if (ec == asio::error::operation_aborted && stream_.is_open()) {
        ec = {};
      } else {
        // As Redis counts a readable event, the read that finds the client gone counts too.
        counters.Bump(counters.reads_processed);
      }
      if (ec) break;
    }
    // The rest of a message WakeForPush began to write comes before anything else.
    output_.append(push_leftover_);
    push_leftover_.clear();
    input_end_ += n;
    counters.Bump(counters.net_input_bytes, n);
    info_->last_active_ms.store(server_.clock().NowMs(), std::memory_order_relaxed);
    info_->memory_bytes.store(MemoryUsage(), std::memory_order_relaxed);
    counters.client_buffers.Note(input_.capacity(), pending_output_);

    if (!co_await ProcessInput(counters)) break;
    if (!info_->push.empty()) output_.append(info_->push.Take());
    if (!co_await WriteOutput(counters)) break;
    info_->query_buffer_bytes.store(input_end_ - input_start_, std::memory_order_relaxed);
  }
  stream_.Close();
  EndTransaction(server_, session_);
  // Once out of the registry no publisher reaches this client, so its outbox's waker and its
  // kill, which publishers call, may go.
  LeaveAllSubscriptions(server_, session_);
  server_.monitors().Remove(*info_);
  if (info_->replica.load(std::memory_order_relaxed)) server_.replication().Detach(info_->id);
  server_.tracking().Disable(*info_);
  info_->push.SetWaker(nullptr);
  server_.clients().Remove(info_->id);
  info_->kill = nullptr;
}

// tls-auth-clients is read live, as Redis reads it for each new connection. A failed
// handshake (no certificate, an unknown CA, a plain client on the TLS port) is logged as
// Redis logs it, at verbose level, and only closes this connection.
awaitable<bool> Connection::Handshake() {
  Settings::TlsAuthClients auth = server_.tls_auth_clients();
  ClientStream::PeerCheck check = auth == Settings::TlsAuthClients::kYes        ? ClientStream::PeerCheck::kRequire
                                  : auth == Settings::TlsAuthClients::kOptional ? ClientStream::PeerCheck::kOptional
                                                                                : ClientStream::PeerCheck::kNone;
  std::string error;
  if (co_await stream_.Handshake(check, &error)) co_return true;
  spdlog::debug("Error accepting a client connection: {} (addr={} laddr={})", error, info_->addr, info_->laddr);
  co_return false;
}

// Parses and runs every complete command in the input, writing early when replies pile up.
// Before authentication the batch stops after an AUTH or HELLO, so that the commands after
// it are parsed under the limits that then apply. False when the connection must close
// without writing more.
awaitable<bool> Connection::ProcessInput(ThreadCounters& counters) {
  bool paused_at_auth = true;
  while (paused_at_auth && !session_.close_after_reply) {
    ApplyLimits();
    bool ok = ParseBatch(&paused_at_auth);
    for (size_t done = 0; done < batch_size_ && !session_.close_after_reply;) {
      done += co_await dispatcher_.Execute(std::span(batch_.data() + done, batch_size_ - done), &output_, kFlushAt);
      if (done < batch_size_ && !co_await WriteOutput(counters)) co_return false;
    }
    owned_args_.clear();
    batch_size_ = 0;
    if (!ok) {
      protocol::ReplyWriter writer(&output_, session_.resp);
      writer.Error("ERR " + protocol_error_);
      session_.close_after_reply = true;
      spdlog::debug("client {} protocol error: {}", info_->addr, protocol_error_);
      co_return true;
    }
    if (static_cast<int64_t>(input_end_ - input_start_) > server_.query_buffer_limit()) {
      // Redis's rule: the client is closed without a reply.
      spdlog::warn("closing client {} that reached max query buffer length ({} bytes)", info_->addr,
                   input_end_ - input_start_);
      co_return false;
    }
  }
  co_return true;
}

// Writes everything pending before returning. False when the connection must close: the
// write failed, or the replies exceed the hard output buffer limit (then nothing is written,
// as Redis drops such a client without sending the rest).
awaitable<bool> Connection::WriteOutput(ThreadCounters& counters) {
  if (output_.empty()) co_return true;
  OutputBufferLimit limit = OutputLimit();
  if (limit.hard > 0 && CountedOutputBytes(output_.size()) > static_cast<uint64_t>(limit.hard)) {
    spdlog::warn("client {} closed for overcoming of output buffer limits ({} bytes)", info_->addr, output_.size());
    co_return false;
  }
  counters.client_buffers.Note(input_.capacity(), output_.size());
  // The replies outgrew the buffer the earlier ones left (Redis's reply_buffer_expands); a
  // first allocation is no expansion.
  if (output_.capacity() > kept_output_capacity_ && kept_output_capacity_ > kInlineCapacity) {
    counters.Bump(counters.reply_buffer_expands);
  }
  boost::system::error_code ec;
  // Most replies fit the socket's send buffer: written here, they cost no trip through the
  // event loop (Asio posts the completion of a write even when it finished at once, and the
  // loop then often polls epoll before resuming this coroutine). Only what the socket does
  // not take now waits in the coroutine's write, where the soft output limit watches it.
  size_t written = stream_.TryWrite(asio::buffer(output_), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) ec = {};
  if (!ec && written < output_.size()) {
    // The whole write counts as pending, as it did before the direct send, since it stands
    // for the replies the client has yet to take (Redis's output buffer holds all of them).
    pending_output_ = output_.size();
    pending_since_ms_ = server_.clock().NowMs();
    info_->output_bytes.store(pending_output_, std::memory_order_relaxed);
    info_->memory_bytes.store(MemoryUsage(), std::memory_order_relaxed);
    co_await stream_.Write(asio::buffer(output_) + written, ec);
    pending_output_ = 0;
    info_->output_bytes.store(0, std::memory_order_relaxed);
  }
  counters.Bump(counters.writes_processed);
  counters.Bump(counters.net_output_bytes, output_.size());
  // Redis's reply_buffer_shrinks: a buffer grown large for one reply is not kept for the
  // small ones that usually follow.
  if (output_.capacity() > kMaxKeptOutput) {
    output_ = std::string();
    counters.Bump(counters.reply_buffer_shrinks);
  } else {
    output_.clear();
  }
  kept_output_capacity_ = output_.capacity();
  info_->memory_bytes.store(MemoryUsage(), std::memory_order_relaxed);
  co_return !ec;
}

// A replica's stream is limited as it is pushed (client-output-buffer-limit replica,
// server/replication.h), and its payload, as in Redis, not at all.
OutputBufferLimit Connection::OutputLimit() const {
  if (info_->replica.load(std::memory_order_relaxed)) return {};
  return server_.output_limit(info_->subscribed());
}

// The buffers' capacity, not their contents: memory kept for reuse is memory used.
size_t Connection::MemoryUsage() const {
  return sizeof(Connection) + input_.capacity() + output_.capacity() +
         batch_.capacity() * sizeof(std::vector<std::string_view>);
}

bool Connection::ParseBatch(bool* paused_at_auth) {
  *paused_at_auth = false;
  while (input_start_ < input_end_) {
    std::string_view window(input_.data() + input_start_, input_end_ - input_start_);
    if (batch_size_ == batch_.size()) batch_.emplace_back();
    std::vector<std::string_view>& args = batch_[batch_size_];
    args.clear();
    size_t consumed = 0;
    protocol::ParseStatus status = parser_.Parse(window, &consumed, &args);
    if (status == protocol::ParseStatus::kNeedMore) return true;
    if (status == protocol::ParseStatus::kError) {
      protocol_error_ = parser_.error();
      parser_.Reset();
      return false;
    }
    input_start_ += consumed;
    if (args.empty()) {
      // A replica's empty line says it is alive while it loads its payload (Redis's rule).
      if (info_->replica.load(std::memory_order_relaxed)) [[unlikely]] server_.replication().Acknowledge(info_->id, -1);
      continue;
    }
    // Inline arguments with escapes live in the parser until its next call; keep copies.
    for (std::string_view& a : args) {
      if (a.data() < window.data() || a.data() + a.size() > window.data() + window.size()) {
        owned_args_.emplace_back(a);
        a = owned_args_.back();
      }
    }
    ++batch_size_;
    if (!session_.authenticated && (protocol::EqualsIgnoreCase(args[0], "AUTH") || protocol::EqualsIgnoreCase(args[0], "HELLO"))) {
      *paused_at_auth = true;
      return true;
    }
  }
  return true;
}

void Connection::CompactInput() {
  if (input_start_ == 0) return;
  size_t live = input_end_ - input_start_;
  if (live > 0) std::memmove(input_.data(), input_.data() + input_start_, live);
  input_start_ = 0;
  input_end_ = live;
  if (live == 0 && input_.size() > 4 * kReadChunk) {
    input_ = std::string();
  }
}

// Checks once a second, against the live settings, so CONFIG SET reaches clients that are
// already connected. A client is closed when it has been idle longer than `timeout`, or
// when a write of more than the soft output buffer limit has been waiting for it to read
// longer than the limit's seconds.
awaitable<void> Connection::IdleWatchdog(std::shared_ptr<Connection> self) {
  asio::steady_timer timer(stream_.socket().get_executor());
  boost::system::error_code ec;
  while (stream_.is_open()) {
    timer.expires_after(std::chrono::seconds(1));
    co_await timer.async_wait(asio::redirect_error(use_awaitable, ec));
    int64_t now = server_.clock().NowMs();
    // Seen every second even when idle, as Redis's clientsCron sees every client.
    server_.counters(session_.home).client_buffers.Note(input_.capacity(), pending_output_);
    int64_t timeout_s = server_.idle_timeout_s();
    int64_t idle_ms = now - info_->last_active_ms.load(std::memory_order_relaxed);
    // Like Redis, the idle timeout spares blocked clients, whose own timeout applies,
    // subscribers, which wait for messages, and replicas (repl-timeout watches them).
    bool waiting = info_->is_blocked.load(std::memory_order_relaxed) || info_->subscribed() ||
                   info_->replica.load(std::memory_order_relaxed);
    if (timeout_s > 0 && idle_ms > timeout_s * 1000 && !waiting) {
      spdlog::debug("closing idle client {}", info_->addr);
      stream_.Close();
      break;
    }
    OutputBufferLimit limit = OutputLimit();
    size_t pending = pending_output_;
    if (limit.soft > 0 && CountedOutputBytes(pending) > static_cast<uint64_t>(limit.soft) &&
        now - pending_since_ms_ > limit.soft_ms()) {
      spdlog::warn("client {} closed for overcoming of output buffer limits ({} bytes unsent for {} ms)", info_->addr,
                   pending, now - pending_since_ms_);
      stream_.Close();
      break;
    }
  }
}

}  // namespace lapse::server
