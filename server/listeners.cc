#include "server/listeners.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/config.h"

namespace lapse::server {

namespace {

// The errors after which Redis's listenToPort goes on to the next address: the machine lacks
// the family, or (with '-') the address.
bool Skippable(const boost::system::error_code& ec, bool optional) {
  if (ec.category() != boost::system::system_category()) return false;
  switch (ec.value()) {
    case EADDRNOTAVAIL:
      return optional;
    case ENOPROTOOPT:
    case EPROTONOSUPPORT:
    case ESOCKTNOSUPPORT:
    case EPFNOSUPPORT:
    case EAFNOSUPPORT:
      return true;
    default:
      return false;
  }
}

// The endpoint `address` names on `port`: a literal, "*" / "::*", or a name resolved in the
// family the address's form implies.
std::optional<tcp::endpoint> Resolve(asio::io_context& context, const std::string& address, int port,
                                     boost::system::error_code& ec) {
  bool v6 = address.find(':') != std::string::npos;
  auto port16 = static_cast<uint16_t>(port);
  if (address == "*") return tcp::endpoint(tcp::v4(), port16);
  if (address == "::*") return tcp::endpoint(tcp::v6(), port16);
  asio::ip::address literal = asio::ip::make_address(address, ec);
  if (!ec) return tcp::endpoint(literal, port16);
  ec.clear();
  tcp::resolver resolver(context);
  auto results = resolver.resolve(v6 ? tcp::v6() : tcp::v4(), address, std::to_string(port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) {
    if (!ec) ec = asio::error::host_not_found;
    return std::nullopt;
  }
  return results.begin()->endpoint();
}

std::optional<std::string> ListenOne(asio::io_context& context, const std::string& address, int port, int backlog,
                                     std::shared_ptr<TcpListener>* out, bool* skipped) {
  bool optional = !address.empty() && address[0] == '-';
  std::string name = optional ? address.substr(1) : address;
  boost::system::error_code ec;
  std::optional<tcp::endpoint> endpoint = Resolve(context, name, port, ec);
  auto listener = std::make_shared<TcpListener>(context);
  tcp::acceptor& acceptor = listener->acceptor;
  if (endpoint) {
    acceptor.open(endpoint->protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec && endpoint->address().is_v6()) acceptor.set_option(asio::ip::v6_only(true), ec);
    if (!ec) acceptor.bind(*endpoint, ec);
    if (!ec) acceptor.listen(backlog, ec);
  }
  if (!ec) {
    *out = std::move(listener);
    return std::nullopt;
  }
  std::string why = "Could not create server TCP listening socket " + name + ":" + std::to_string(port) + ": " +
                    ec.message();
  spdlog::warn("Warning: {}", why);
  *skipped = Skippable(ec, optional);
  return why;
}

}  // namespace

std::optional<std::string> ListenTcp(asio::io_context& context, std::string_view bind, int port, int backlog,
                                     TcpListeners* out) {
  TcpListeners opened;
  for (const std::string& address : SplitBindAddresses(bind)) {
    std::shared_ptr<TcpListener> listener;
    bool skipped = false;
    // Port 0: the first address takes the kernel's pick and the others follow it.
    int wanted = port != 0 ? port : BoundPort(opened);
    if (auto err = ListenOne(context, address, wanted, backlog, &listener, &skipped)) {
      if (skipped) continue;
      boost::system::error_code ignored;
      for (auto& l : opened) l->acceptor.close(ignored);
      return err;
    }
    opened.push_back(std::move(listener));
  }
  *out = std::move(opened);
  return std::nullopt;
}

int BoundPort(const TcpListeners& listeners) {
  for (const auto& l : listeners) {
    boost::system::error_code ec;
    tcp::endpoint local = l->acceptor.local_endpoint(ec);
    if (!ec) return local.port();
  }
  return 0;
}

void Retire(TcpListener& listener) {
  listener.retired.store(true);
  ::shutdown(listener.acceptor.native_handle(), SHUT_RDWR);
}

std::optional<std::string> ListenUnix(asio::io_context& context, const std::string& path, int perm, int backlog,
                                      std::shared_ptr<local_stream::acceptor>* out) {
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return "Failed opening Unix socket: unix socket path too long (" + std::to_string(path.size()) +
           "), must be under " + std::to_string(sizeof(sockaddr_un::sun_path));
  }
  // A file left by a server that did not stop cleanly would make the bind fail; Redis
  // removes whatever is at the path, and so does lapse.
  ::unlink(path.c_str());
  auto acceptor = std::make_shared<local_stream::acceptor>(context);
  boost::system::error_code ec;
  local_stream::endpoint endpoint(path);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (ec) return "Failed opening Unix socket: bind: " + ec.message();
  acceptor->listen(backlog, ec);
  if (ec) return "Failed opening Unix socket: listen: " + ec.message();
  // As in Redis, a mode that cannot be set leaves the socket as the umask made it.
  if (perm != 0 && ::chmod(path.c_str(), static_cast<mode_t>(perm)) != 0) {
    spdlog::warn("Could not set the mode of unix socket {}: {}", path, std::strerror(errno));
  }
  *out = std::move(acceptor);
  return std::nullopt;
}

void ApplyTcpKeepAlive(tcp::socket& socket, int64_t interval) {
  if (interval <= 0) return;
  int fd = socket.native_handle();
  int yes = 1;
  int idle = static_cast<int>(interval);
  int probe_every = std::max(idle / 3, 1);
  int probes = 3;
  // Failures leave the connection as it is, as Redis ignores them after logging.
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof yes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &probe_every, sizeof probe_every);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

}  // namespace lapse::server
