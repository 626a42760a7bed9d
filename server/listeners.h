// File: server/listeners.h
//
// The sockets lapse accepts clients on, opened by Redis 7.0's rules (listenToPort,
// anetTcpServer, anetUnixServer):
//
// - `bind` lists addresses separated by single spaces. An address with a ':' is IPv6, any
//   other IPv4; names are resolved in that family. "*" is every IPv4 address and "::*" every
//   IPv6 one. IPv6 sockets are v6-only, so "* ::*" binds both families on one port.
// - An address whose family the machine lacks is skipped. One that is not on the machine is
//   skipped when written with a leading '-' ("-::1" in Debian's redis.conf) and is an error
//   otherwise, as is any other failure: then nothing stays open.
// - Port 0 lets the kernel pick a port for the first address; the others take the same one.
// - The unix socket replaces a stale file at its path, gets `unixsocketperm` when not 0, and
//   its file is removed when the server stops.
//
// CONFIG SET bind moves the TCP listeners while clients connect. The old sockets stop
// listening first (Retire: a shutdown(2), safe from any thread, which frees their addresses
// at once), the new ones are bound, and if that fails the old addresses are bound again,
// as Redis's changeBindAddr restores them. The old acceptors are closed on their own thread.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/asio.h"

namespace lapse::server {

using local_stream = asio::local::stream_protocol;

// One listening TCP socket of the plain port or the TLS port.
struct TcpListener {
  explicit TcpListener(asio::io_context& context) : acceptor(context) {}
  tcp::acceptor acceptor;
  // Set by Retire before the socket stops listening: its accept loop then ends on the error.
  std::atomic<bool> retired{false};
};

using TcpListeners = std::vector<std::shared_ptr<TcpListener>>;

// Opens a listener for each address of `bind` on `port` (the accept loops are the caller's).
// On failure nothing is left open and the message says which address failed and why.
std::optional<std::string> ListenTcp(asio::io_context& context, std::string_view bind, int port, int backlog,
                                     TcpListeners* out);

// The port the listeners got (the kernel's pick for port 0); 0 when there are none.
int BoundPort(const TcpListeners& listeners);

// Stops `listener` listening, from any thread: its address is free when this returns, and
// its accept loop ends. The acceptor itself must still be closed on its own thread.
void Retire(TcpListener& listener);

// Listens on the unix-domain socket `path`, chmod-ed to `perm` unless 0.
std::optional<std::string> ListenUnix(asio::io_context& context, const std::string& path, int perm, int backlog,
                                      std::shared_ptr<local_stream::acceptor>* out);

// tcp-keepalive for an accepted client, as Redis's anetKeepAlive: the first probe after
// `interval` seconds of silence, then every third of it, and the connection dropped after
// three unanswered probes. 0 leaves keepalive off.
void ApplyTcpKeepAlive(tcp::socket& socket, int64_t interval);

}  // namespace lapse::server
