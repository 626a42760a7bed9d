// File: server/migrate_command.cc
//
// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
// AUTH2 username password] [KEYS key ...], as Redis 7.0's migrateCommand: the keys go to
// another server (Redis or lapse) as RESTORE commands carrying DUMP's payload and the time
// each has left, and, without COPY, those the target acknowledged are deleted here.
//
// Like Redis, it runs as one atomic step: it holds the shards of its keys while it talks to
// the target, with blocking socket calls bounded by `timeout` per operation, so no client
// sees a key both here and there, or neither. (Redis blocks its whole server meanwhile;
// lapse blocks the clients of the keys' shards and of this event-loop thread.)
//
// Connections are cached per host:port, as Redis caches them (at most 64, each closed after
// 10 s idle, INFO's migrate_cached_sockets), and remember the database last selected, so a
// run of MIGRATEs sends SELECT once. A socket error on the first reply of a cached
// connection (the target closed it meanwhile) is retried once on a new one, unless it was a
// timeout, with Redis's IOERR errors otherwise.
//
// What it logs: the DEL of the keys it moved (the AOF must not replay a MIGRATE), as Redis
// propagates it.
#include "server/migrate.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/db.h"
#include "engine/rdb_codec.h"
#include "engine/rdb_value.h"
#include "engine/request_units.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/aof.h"
#include "server/key_util.h"
#include "server/keyspace_events.h"
#include "server/persistence.h"
#include "server/server.h"

namespace lapse::server {

namespace {

using protocol::AsCString;
using protocol::EqualsIgnoreCase;

constexpr size_t kMaxCachedLinks = 64;      // Redis's MIGRATE_SOCKET_CACHE_ITEMS
constexpr int64_t kLinkIdleMs = 10 * 1000;  // Redis's MIGRATE_SOCKET_CACHE_TTL
constexpr size_t kWriteChunk = 64 * 1024;   // as Redis sends the commands

// ---- connections ----

// A connection to a target; it closes its socket when it goes.
struct Link {
  int fd = -1;
  int64_t last_db = -1;  // the database selected on it, -1 when unknown
  int64_t last_use_ms = 0;
  std::string unread;    // received past the last reply line read

  Link() = default;
  Link(Link&& other) noexcept { *this = std::move(other); }
  Link& operator=(Link&& other) noexcept {
    if (this != &other) {
      Close();
      fd = std::exchange(other.fd, -1);
      last_db = other.last_db;
      last_use_ms = other.last_use_ms;
      unread = std::move(other.unread);
    }
    return *this;
  }
  ~Link() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// The idle connections, by "host:port". A MIGRATE takes its target's out while it uses it,
// so two threads never share one.
class LinkCache {
 public:
  static LinkCache& Instance() {
    static LinkCache cache;
    return cache;
  }
  std::optional<Link> Take(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = links_.find(name);
    if (it == links_.end()) return std::nullopt;
    Link link = std::move(it->second);
    links_.erase(it);
    return link;
  }
  void Put(const std::string& name, Link link) {
    std::lock_guard lock(mu_);
    // Another MIGRATE to the same target may have cached one meanwhile: it goes.
    if (auto it = links_.find(name); it != links_.end()) links_.erase(it);
    // As Redis: full, one goes at random (the hash order is as good as random here).
    if (links_.size() >= kMaxCachedLinks) links_.erase(links_.begin());
    links_.emplace(name, std::move(link));
  }
  size_t Size() {
    std::lock_guard lock(mu_);
    return links_.size();
  }
  void CloseIdle(int64_t now_ms) {
    std::lock_guard lock(mu_);
    for (auto it = links_.begin(); it != links_.end();) {
      if (now_ms - it->second.last_use_ms > kLinkIdleMs) {
        it = links_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, Link> links_;
};

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits until `fd` is ready for `events` or `deadline_ms` (steady clock) passes; on a
// timeout errno is ETIMEDOUT.
bool WaitFor(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    int64_t left = deadline_ms - SteadyMs();
    if (left <= 0) {
      errno = ETIMEDOUT;
      return false;
    }
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

// A TCP connection to host:port, or -1 when none could be started or it did not complete
// within `timeout_ms`. As in Redis, a connection that completed with an error (refused)
// counts as made: the error shows when the commands are written. The port is read as
// Redis's atoi reads it.
int Connect(const std::string& host, std::string_view port, int64_t timeout_ms) {
  std::string service = std::to_string(std::atoi(std::string(port).c_str()));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0) return -1;
  int64_t deadline = SteadyMs() + timeout_ms;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    bool connected = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
                     (errno == EINPROGRESS && WaitFor(fd, POLLOUT, deadline));
    if (!connected) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// Sends all of `data`, each 64 KiB within `timeout_ms`.
bool SendAll(int fd, std::string_view data, int64_t timeout_ms) {
  while (!data.empty()) {
    std::string_view chunk = data.substr(0, kWriteChunk);
    int64_t deadline = SteadyMs() + timeout_ms;
    while (!chunk.empty()) {
      ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
      if (n > 0) {
        chunk.remove_prefix(static_cast<size_t>(n));
        data.remove_prefix(static_cast<size_t>(n));
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return false;
      } else if (!WaitFor(fd, POLLOUT, deadline)) {
        return false;
      }
    }
  }
  return true;
}

// One reply line (without its CRLF) within `timeout_ms`, cut to 1023 bytes as Redis's
// buffer cuts it. A closed connection, or a line that does not end, is an error whose errno
// is not ETIMEDOUT, so it may be retried.
bool ReadLine(Link& link, int64_t timeout_ms, std::string* line) {
  constexpr size_t kMaxLine = 1023;
  constexpr size_t kMaxUnread = 64 * 1024;
  int64_t deadline = SteadyMs() + timeout_ms;
  for (;;) {
    if (size_t end = link.unread.find('\n'); end != std::string::npos) {
      line->assign(link.unread, 0, end);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      if (line->size() > kMaxLine) line->resize(kMaxLine);
      link.unread.erase(0, end + 1);
      return true;
    }
    if (link.unread.size() > kMaxUnread) {
      errno = EPROTO;
      return false;
    }
    char buf[4096];
    ssize_t n = ::recv(link.fd, buf, sizeof buf, 0);
    if (n > 0) {
      link.unread.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      errno = ECONNRESET;
      return false;
    } else if (errno != EAGAIN && errno != EINTR) {
      return false;
    } else if (!WaitFor(link.fd, POLLIN, deadline)) {
      return false;
    }
  }
}

// ---- the command ----

struct MigrateRequest {
  bool copy = false;
  bool replace = false;
  std::optional<std::string_view> username;
  std::optional<std::string_view> password;
  std::vector<std::string_view> keys;
  int64_t db = 0;
  int64_t timeout_ms = 0;
};

// Options first, then the timeout and the database, in Redis's order, so that each bad
// input gets Redis's error. False once the error is sent.
bool ParseMigrate(ConnCommand& c, MigrateRequest* m) {
  size_t first_key = 3;
  size_t key_count = 1;
  for (size_t j = 6; j < c.args.size(); ++j) {
    std::string_view a = AsCString(c.args[j]);
    size_t more = c.args.size() - 1 - j;
    if (EqualsIgnoreCase(a, "COPY")) {
      m->copy = true;
    } else if (EqualsIgnoreCase(a, "REPLACE")) {
      m->replace = true;
    } else if (EqualsIgnoreCase(a, "AUTH")) {
      if (more == 0) return c.reply.Error(protocol::errors::kSyntax), false;
      m->password = c.args[++j];
    } else if (EqualsIgnoreCase(a, "AUTH2")) {
      if (more < 2) return c.reply.Error(protocol::errors::kSyntax), false;
      m->username = c.args[++j];
      m->password = c.args[++j];
    } else if (EqualsIgnoreCase(a, "KEYS")) {
      if (!c.args[3].empty()) {
        return c.reply.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"),
               false;
      }
      first_key = j + 1;
      key_count = c.args.size() - j - 1;
      break;
    } else {
      return c.reply.Error(protocol::errors::kSyntax), false;
    }
  }
  if (!protocol::ParseInt64(c.args[5], &m->timeout_ms) || !protocol::ParseInt64(c.args[4], &m->db)) {
    return c.reply.Error(protocol::errors::kNotInteger), false;
  }
  if (m->timeout_ms <= 0) m->timeout_ms = 1000;
  // Longer than poll can wait (24 days) is as good as forever, and keeps deadlines in range.
  m->timeout_ms = std::min<int64_t>(m->timeout_ms, INT_MAX);
  for (size_t i = 0; i < key_count; ++i) m->keys.push_back(c.args[first_key + i]);
  return true;
}

struct FoundKey {
  std::string_view key;
  uint32_t shard;
};

// The commands one attempt sends: AUTH and SELECT when needed, then a RESTORE per key that
// has not expired meanwhile (`sent` lists those).
std::string RestoreCommands(ConnCommand& c, const MigrateRequest& m, const std::vector<FoundKey>& found,
                            bool select, int64_t now_ms, std::vector<FoundKey>* sent) {
  // A command is written as a client sends it: an array of bulk strings.
  std::string out;
  protocol::ReplyWriter w(&out);
  if (m.password) {
    w.ArrayHeader(m.username ? 3 : 2);
    w.Bulk("AUTH");
    if (m.username) w.Bulk(*m.username);
    w.Bulk(*m.password);
  }
  if (select) {
    w.ArrayHeader(2);
    w.Bulk("SELECT");
    w.Bulk(std::to_string(m.db));
  }
  ShardSet& shards = c.server.shards();
  for (const FoundKey& k : found) {
    engine::Entry* e = shards.shard(k.shard).db(c.session.db).Find(k.key, engine::HashKey(k.key), now_ms);
    if (e == nullptr) continue;
    int64_t ttl = 0;
    if (e->deadline() != engine::kNoDeadline) ttl = std::max<int64_t>(e->deadline() - now_ms, 1);
    std::string body;
    engine::rdb::AppendValue(body, e, c.server.persistence().compression());
    w.ArrayHeader(m.replace ? 5 : 4);
    w.Bulk("RESTORE");
    w.Bulk(k.key);
    w.Bulk(std::to_string(ttl));
    w.Bulk(engine::rdb::SealPayload(std::move(body)));
    if (m.replace) w.Bulk("REPLACE");
    sent->push_back(k);
  }
  return out;
}

// Deletes the keys the target acknowledged, as DEL would, and logs their DEL.
void DeleteMoved(ConnCommand& c, const std::vector<FoundKey>& moved, int64_t now_ms) {
  ShardSet& shards = c.server.shards();
  LoggedCommand del{"DEL"};
  for (const FoundKey& k : moved) {
    engine::Db& db = shards.shard(k.shard).db(c.session.db);
    engine::Entry* e = db.Find(k.key, engine::HashKey(k.key), now_ms);
    c.charge.ru += engine::RuCharge(engine::RuOp::kDelete, k.key.size() + (e ? e->value().size() : 0));
    db.Erase(k.key, now_ms);
    NotifyKeyspace(c, kEventGeneric, "del", k.key);
    del.emplace_back(k.key);
  }
  c.changes = moved.size();
  if (moved.empty()) return;
  c.server.aof().Log(c.session.db, {std::move(del)});
}

// The run of Redis's migrateCommand after its checks, holding the keys' shards.
void MigrateHolding(ConnCommand& c, const MigrateRequest& m) {
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  std::vector<FoundKey> found;
  for (std::string_view key : m.keys) {
    uint32_t id = shards.ShardFor(key);
    engine::Entry* e = FindKey(shards.shard(id), shards.shard(id).db(c.session.db), key, now, Lookup::kRead);
    c.charge.ru += engine::RuCharge(engine::RuOp::kRead, key.size() + (e ? e->value().size() : 0));
    if (e != nullptr) found.push_back({key, id});
  }
  // Often a key that expired meanwhile: not an error.
  if (found.empty()) return c.reply.SimpleString("NOKEY");

  std::string name = std::string(c.args[1]) + ":" + std::string(c.args[2]);
  LinkCache& cache = LinkCache::Instance();
  bool may_retry = true;
  for (;;) {
    std::optional<Link> cached = cache.Take(name);
    Link link;
    if (cached) {
      link = std::move(*cached);
    } else {
      link.fd = Connect(std::string(c.args[1]), c.args[2], m.timeout_ms);
      if (link.fd < 0) return c.reply.Error("IOERR error or timeout connecting to the client");
    }
    bool select = link.last_db != m.db;
    std::vector<FoundKey> sent;
    // Each attempt reads the clock again: the TTLs sent are what is left now, and a key that
    // expired while connecting is not sent.
    now = c.server.clock().NowMs();
    std::string commands = RestoreCommands(c, m, found, select, now, &sent);
    bool write_error = !SendAll(link.fd, commands, m.timeout_ms);
    std::string auth_reply, select_reply, reply;
    bool socket_error = write_error || (m.password && !ReadLine(link, m.timeout_ms, &auth_reply)) ||
                        (select && !ReadLine(link, m.timeout_ms, &select_reply));
    // As Redis: an AUTH or SELECT that failed fails every RESTORE after it, and the first
    // error is the one reported.
    const std::string* setup_error = auth_reply.starts_with('-')     ? &auth_reply
                                     : select_reply.starts_with('-') ? &select_reply
                                                                     : nullptr;
    std::optional<std::string> target_error;
    std::vector<FoundKey> moved;
    size_t replies = 0;
    for (; !socket_error && replies < sent.size(); ++replies) {
      if (!ReadLine(link, m.timeout_ms, &reply)) {
        socket_error = true;
        break;
      }
      const std::string* error = setup_error != nullptr ? setup_error : reply.starts_with('-') ? &reply : nullptr;
      if (error != nullptr) {
        if (!target_error) target_error = error->substr(1);
      } else if (!m.copy) {
        moved.push_back(sent[replies]);
      }
    }
    int error_number = errno;
    if (!m.copy) DeleteMoved(c, moved, now);
    // Nothing was processed yet and a cached connection may just have been closed by the
    // target: once more on a new one, unless the target was too slow.
    bool retry = !target_error && socket_error && replies == 0 && may_retry && error_number != ETIMEDOUT;
    if (socket_error) {
      link.Close();
    } else {
      // After an error from the target, which database is selected there is not known.
      link.last_db = target_error ? -1 : m.db;
      link.last_use_ms = now;
      cache.Put(name, std::move(link));
    }
    if (retry) {
      may_retry = false;
      continue;
    }
    if (target_error) return c.reply.Error("ERR Target instance replied with error: " + *target_error);
    if (socket_error) {
      return c.reply.Error(write_error ? "IOERR error or timeout writing to target instance"
                                       : "IOERR error or timeout reading to target instance");
    }
    return c.reply.Ok();
  }
}

void CmdMigrate(ConnCommand& c) {
  MigrateRequest m;
  if (!ParseMigrate(c, &m)) return;
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> ids;
  for (std::string_view key : m.keys) ids.push_back(shards.ShardFor(key));
  if (ids.empty()) return c.reply.SimpleString("NOKEY");
  shards.RunHolding(ids, [&] { MigrateHolding(c, m); });
}

}  // namespace

void MigrateKeyPositions(Args args, std::vector<size_t>* out) {
  for (size_t i = 6; i < args.size(); ++i) {
    std::string_view a = AsCString(args[i]);
    if (EqualsIgnoreCase(a, "KEYS")) {
      if (!args[3].empty()) return;
      for (size_t k = i + 1; k < args.size(); ++k) out->push_back(k);
      return;
    }
    if (EqualsIgnoreCase(a, "AUTH")) i += 1;
    else if (EqualsIgnoreCase(a, "AUTH2")) i += 2;
  }
  out->push_back(3);
}

void RegisterMigrateCommand(CommandTable& table) {
  CommandSpec migrate{"migrate", -6, kWrite | kDangerous, 3, 3, 1, CmdMigrate, "generic",
                      "Atomically transfer a key from a Redis instance to another one."};
  migrate.find_keys = MigrateKeyPositions;
  table.Add(std::move(migrate));
}

size_t MigrateCachedSockets() { return LinkCache::Instance().Size(); }

void CloseIdleMigrateSockets(int64_t now_ms) { LinkCache::Instance().CloseIdle(now_ms); }

}  // namespace lapse::server
