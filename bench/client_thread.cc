// Level-triggered epoll: EPOLLIN is always armed, EPOLLOUT only while a connection has bytes
// the kernel would not take. A connection is finished when it may send no more and has no
// reply outstanding; the loop ends when every connection is finished, or, as a guard against
// a hung server, kDrainTimeoutNs after the deadline.
#include "bench/client_thread.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>

#include "protocol/reply_reader.h"

namespace lapse::bench {
namespace {

using protocol::ReplyReader;
using protocol::ReplyStatus;
using protocol::ReplyType;

constexpr size_t kReadChunk = 64 * 1024;
constexpr uint64_t kNsPerSecond = 1'000'000'000;
constexpr uint64_t kDrainTimeoutNs = 10 * kNsPerSecond;

struct InFlight {
  uint32_t command;
  uint64_t sent_ns;
};

// Fixed-capacity FIFO of the requests awaiting replies (capacity = --pipeline).
class InFlightQueue {
 public:
  explicit InFlightQueue(size_t capacity) : slots_(capacity) {}
  size_t size() const { return size_; }
  bool full() const { return size_ == slots_.size(); }
  void Push(InFlight f) {
    slots_[(head_ + size_) % slots_.size()] = f;
    ++size_;
  }
  InFlight Pop() {
    InFlight f = slots_[head_];
    head_ = (head_ + 1) % slots_.size();
    --size_;
    return f;
  }
  // Stamps the newest `n` entries with the time they are written.
  void StampNewest(size_t n, uint64_t sent_ns) {
    for (size_t i = size_ - n; i < size_; ++i) slots_[(head_ + i) % slots_.size()].sent_ns = sent_ns;
  }

 private:
  std::vector<InFlight> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

struct Connection {
  Connection(int fd_in, const BenchOptions& options, const CommandMix& mix, uint64_t slice, uint64_t slices)
      : fd(fd_in), builder(options, mix, slice, slices), in_flight(static_cast<size_t>(options.pipeline)) {}

  int fd;
  RequestBuilder builder;
  ReplyReader reader;
  InFlightQueue in_flight;
  std::string in;           // in[in_start, in_len) are unread reply bytes
  size_t in_start = 0;
  size_t in_len = 0;
  std::string out;          // out[out_sent, size) still to write
  size_t out_sent = 0;
  uint64_t sent = 0;        // requests issued
  bool writable_armed = false;
  bool finished = false;
};

bool SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Blocking exchange used only at connect time.
bool SendHello3(int fd, std::string* error) {
  static constexpr std::string_view kHello = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
  if (send(fd, kHello.data(), kHello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(kHello.size())) {
    *error = "cannot send HELLO 3";
    return false;
  }
  ReplyReader reader;
  std::string buffer;
  char chunk[4096];
  while (true) {
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) {
      *error = "connection closed during HELLO 3";
      return false;
    }
    buffer.append(chunk, static_cast<size_t>(n));
    size_t consumed;
    ReplyType type;
    ReplyStatus status = reader.Next(buffer, &consumed, &type);
    if (status == ReplyStatus::kNeedMore) continue;
    if (status == ReplyStatus::kOk && type != ReplyType::kError) return true;
    *error = "server refused HELLO 3 (RESP3 unsupported?)";
    return false;
  }
}

class EventLoop {
 public:
  EventLoop(const BenchOptions& options, const CommandMix& mix, uint64_t start_ns, uint64_t deadline_ns)
      : options_(options), mix_(mix), start_ns_(start_ns), deadline_ns_(deadline_ns) {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    result_.commands.resize(mix.templates.size());
  }
  ~EventLoop() {
    for (auto& c : connections_) close(c->fd);
    if (epoll_fd_ >= 0) close(epoll_fd_);
  }

  void Add(int fd, uint64_t slice, uint64_t slices) {
    connections_.push_back(std::make_unique<Connection>(fd, options_, mix_, slice, slices));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = connections_.back().get();
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }

  ThreadResult Run();

 private:
  bool MaySend(const Connection& c) const {
    if (stopping_) return false;
    return options_.test_time_s > 0 || c.sent < options_.requests;
  }
  void Refill(Connection& c);
  void Flush(Connection& c);
  void ReadReplies(Connection& c);
  void RecordReply(Connection& c, ReplyType type, uint64_t now_ns);
  void SetWritableInterest(Connection& c, bool armed);
  void Finish(Connection& c, bool failed);
  void FinishIdle();
  std::vector<CommandFigures>& SecondOf(uint64_t now_ns);

  const BenchOptions& options_;
  const CommandMix& mix_;
  uint64_t start_ns_;
  uint64_t deadline_ns_;
  int epoll_fd_ = -1;
  std::vector<std::unique_ptr<Connection>> connections_;
  size_t active_ = 0;
  bool stopping_ = false;
  ThreadResult result_;
};

void EventLoop::SetWritableInterest(Connection& c, bool armed) {
  if (c.writable_armed == armed) return;
  epoll_event ev{};
  ev.events = EPOLLIN | (armed ? static_cast<uint32_t>(EPOLLOUT) : 0u);
  ev.data.ptr = &c;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.writable_armed = armed;
}

void EventLoop::Finish(Connection& c, bool failed) {
  if (c.finished) return;
  c.finished = true;
  --active_;
  if (failed) {
    ++result_.connection_errors;
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  }
}

void EventLoop::Flush(Connection& c) {
  while (c.out_sent < c.out.size()) {
    ssize_t n = send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      SetWritableInterest(c, true);
      return;
    }
    Finish(c, true);
    return;
  }
  c.out.clear();
  c.out_sent = 0;
  SetWritableInterest(c, false);
}

void EventLoop::Refill(Connection& c) {
  size_t added = 0;
  while (!c.in_flight.full() && MaySend(c)) {
    uint32_t command = c.builder.AppendNext(&c.out);
    c.in_flight.Push({command, 0});
    ++c.sent;
    ++added;
  }
  if (added == 0) {
    if (c.in_flight.size() == 0 && !MaySend(c)) Finish(c, false);
    return;
  }
  uint64_t now = NowNs();
  if (result_.first_send_ns == 0) result_.first_send_ns = now;
  c.in_flight.StampNewest(added, now);
  Flush(c);
}

std::vector<CommandFigures>& EventLoop::SecondOf(uint64_t now_ns) {
  size_t second = now_ns > start_ns_ ? static_cast<size_t>((now_ns - start_ns_) / kNsPerSecond) : 0;
  while (result_.timeline.size() <= second) result_.timeline.emplace_back(mix_.templates.size());
  return result_.timeline[second];
}

void EventLoop::RecordReply(Connection& c, ReplyType type, uint64_t now_ns) {
  if (type == ReplyType::kPush) return;  // out-of-band, answers no request
  if (c.in_flight.size() == 0) return;   // a reply nobody asked for; ignore rather than crash
  InFlight f = c.in_flight.Pop();
  uint64_t latency = now_ns > f.sent_ns ? now_ns - f.sent_ns : 0;
  bool error = type == ReplyType::kError || type == ReplyType::kBulkError;
  CommandFigures& total = result_.commands[f.command];
  CommandFigures& second = SecondOf(now_ns)[f.command];
  total.latency.Record(latency);
  second.latency.Record(latency);
  if (error) ++total.errors, ++second.errors;
  result_.last_reply_ns = now_ns;
}

void EventLoop::ReadReplies(Connection& c) {
  if (c.in_start > 0) {
    std::memmove(c.in.data(), c.in.data() + c.in_start, c.in_len - c.in_start);
    c.in_len -= c.in_start;
    c.in_start = 0;
  }
  if (c.in.size() < c.in_len + kReadChunk) c.in.resize(c.in_len + kReadChunk);
  ssize_t n = recv(c.fd, c.in.data() + c.in_len, c.in.size() - c.in_len, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    Finish(c, true);
    return;
  }
  uint64_t now = NowNs();
  c.in_len += static_cast<size_t>(n);
  while (c.in_start < c.in_len) {
    std::string_view unread(c.in.data() + c.in_start, c.in_len - c.in_start);
    size_t consumed;
    ReplyType type;
    ReplyStatus status = c.reader.Next(unread, &consumed, &type);
    if (status == ReplyStatus::kNeedMore) break;
    if (status == ReplyStatus::kError) {
      Finish(c, true);
      return;
    }
    RecordReply(c, type, now);
    c.in_start += consumed;
  }
  Refill(c);
}

// After the deadline, connections with nothing in flight will never be woken by a reply.
void EventLoop::FinishIdle() {
  for (auto& c : connections_) {
    if (!c->finished && c->in_flight.size() == 0) Finish(*c, false);
  }
}

ThreadResult EventLoop::Run() {
  active_ = connections_.size();
  for (auto& c : connections_) Refill(*c);
  epoll_event events[256];
  while (active_ > 0) {
    int n = epoll_wait(epoll_fd_, events, 256, 50);
    for (int i = 0; i < n; ++i) {
      auto* c = static_cast<Connection*>(events[i].data.ptr);
      if (c->finished) continue;
      if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ReadReplies(*c);
      if (!c->finished && (events[i].events & EPOLLOUT)) Flush(*c);
    }
    if (deadline_ns_ == 0) continue;
    uint64_t now = NowNs();
    if (!stopping_ && now >= deadline_ns_) {
      stopping_ = true;
      FinishIdle();
    }
    if (now >= deadline_ns_ + kDrainTimeoutNs) {
      for (auto& c : connections_) Finish(*c, c->in_flight.size() > 0);
    }
  }
  return std::move(result_);
}

}  // namespace

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSecond + static_cast<uint64_t>(ts.tv_nsec);
}

int OpenConnection(const BenchOptions& options, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(options.port);
  if (int rc = getaddrinfo(options.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    *error = std::string("cannot resolve ") + options.host + ": " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    *error = "cannot connect to " + options.host + ":" + port + ": " + std::strerror(errno);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if ((options.protocol == 3 && !SendHello3(fd, error)) || !SetNonBlocking(fd)) {
    if (error->empty()) *error = "cannot make the socket non-blocking";
    close(fd);
    return -1;
  }
  return fd;
}

ThreadResult RunClientThread(const BenchOptions& options, const CommandMix& mix, std::vector<int> fds,
                             uint64_t first_slice, uint64_t start_ns, uint64_t deadline_ns) {
  EventLoop loop(options, mix, start_ns, deadline_ns);
  uint64_t slices = static_cast<uint64_t>(options.threads) * static_cast<uint64_t>(options.clients);
  for (size_t i = 0; i < fds.size(); ++i) loop.Add(fds[i], first_slice + i, slices);
  return loop.Run();
}

}  // namespace lapse::bench
