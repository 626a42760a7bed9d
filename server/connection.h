// File: server/connection.h
//
// One client socket, served by one coroutine on the thread the listener assigned it to:
// read whatever has arrived, parse every complete command in it, execute them as a batch,
// write all their replies with one write, repeat. The write is a direct non-blocking send
// when the socket takes the replies whole, which is almost always: the coroutine then goes
// straight back to reading, without the trip through the event loop that Asio makes to
// complete even a write that finished at once. A partial command stays at the front of
// the input buffer until the rest arrives. A client of the TLS port is served the same way,
// after the handshake, through the same ClientStream (server/client_stream.h).
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "protocol/resp_parser.h"
#include "server/asio.h"
#include "server/client_session.h"
#include "server/client_stream.h"
#include "server/dispatcher.h"

namespace lapse::server {

class Server;
struct ThreadCounters;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `tls`: the context of the TLS port the client came to; nullptr for the plain port.
  Connection(Server& server, ClientStream::Socket socket, ClientPeer peer, std::shared_ptr<asio::ssl::context> tls,
             size_t home_thread);

  // Serves the client until it disconnects, QUITs, errs or the server stops. Takes the
  // owning pointer by value so that the coroutine frame keeps the connection alive.
  static awaitable<void> Serve(std::shared_ptr<Connection> self) { co_await self->Run(); }

 private:
  awaitable<void> Run();
  // The TLS handshake, for a client of the TLS port; false when it failed.
  awaitable<bool> Handshake();

  awaitable<bool> ProcessInput(ThreadCounters& counters);
  // Parses complete commands from the input buffer into batch_; false on a protocol error.
  // Sets *paused_at_auth when it stopped early after an AUTH or HELLO of an unauthenticated
  // client, with more input left to parse.
  bool ParseBatch(bool* paused_at_auth);
  awaitable<bool> WriteOutput(ThreadCounters& counters);
  // Reads the live limits the parser enforces (proto-max-bulk-len).
  void ApplyLimits();
  void CompactInput();
  // What CLIENT LIST shows as tot-mem.
  size_t MemoryUsage() const;
  OutputBufferLimit OutputLimit() const;
  awaitable<void> IdleWatchdog(std::shared_ptr<Connection> self);
  // Ends a read in progress, so that the messages just pushed to the client are written.
  void WakeForPush();

  Server& server_;
  ClientStream stream_;
  std::shared_ptr<ClientInfo> info_;
  ClientSession session_;
  Dispatcher dispatcher_;
  bool unix_socket_;  // no TCP options apply
  protocol::RespParser parser_;
  std::string input_;
  size_t input_start_ = 0;  // first unconsumed byte
  size_t input_end_ = 0;    // one past the last received byte
  std::string output_;
  std::vector<std::vector<std::string_view>> batch_;
  size_t batch_size_ = 0;
  std::deque<std::string> owned_args_;    // copies of inline arguments the parser unescaped
  std::string protocol_error_;
  // The size of the write in progress (0: none) and when it started, for the soft output
  // buffer limit. Both are touched only on the connection's thread.
  bool reading_ = false;  // waiting in async_read_some
  std::string push_leftover_;  // messages WakeForPush could not write at once
  size_t pending_output_ = 0;
  size_t kept_output_capacity_ = 0;  // output_'s capacity after the last write
  int64_t pending_since_ms_ = 0;
};

}  // namespace lapse::server
