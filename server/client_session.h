// File: server/client_session.h
//
// Per-client state that commands read and change (selected database, protocol version,
// authentication, name), kept apart from the socket so that command tests can drive a
// session in-process. ClientInfo is the part other threads may read (CLIENT LIST, INFO):
// its fields are atomics or guarded by the registry's mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/watch.h"
#include "protocol/reply_writer.h"
#include "server/asio.h"
#include "server/pubsub.h"
#include "server/replication.h"

namespace lapse::server {

struct CommandSpec;
struct BlockedClient;
class ClientStream;

struct ClientInfo {
  uint64_t id = 0;
  std::string addr;   // peer, "ip:port"
  std::string laddr;  // local, "ip:port"
  bool unix_socket = false;  // came through the unix socket (flag U); set before it is listed
  int64_t created_ms = 0;
  std::atomic<int64_t> last_active_ms{0};
  std::atomic<int> db{0};
  std::atomic<int> resp{2};
  std::atomic<uint64_t> query_buffer_bytes{0};
  std::atomic<uint64_t> output_bytes{0};  // replies waiting for the client to read them (omem)
  std::atomic<uint64_t> memory_bytes{0};  // all the connection holds: buffers included (tot-mem)
  std::string name;  // guarded by ClientRegistry::mu_
  std::string user = "default";  // the ACL user it is logged in as; guarded by ClientRegistry::mu_
  // True when its user may not run everything: the dispatcher then checks every command
  // against the user (server/acl.h). Set by the ACL registry, read by the client's thread.
  std::atomic<bool> acl_restricted{false};
  // The full name of the last command run ("get", "client|list"), nullptr before any or
  // after an unknown one. It points into the server's command table, which outlives every
  // client and no longer changes once clients connect; set on every command, so no lock.
  std::atomic<const std::string*> last_command{nullptr};
  std::atomic<int64_t> multi_queued{-1};  // commands queued since MULTI; -1 outside MULTI
  // The client's WATCH state as the shards see it; here so that CLIENT LIST shows flag d.
  engine::Watcher watcher;
  std::function<void()> kill;  // closes the connection from its own thread; set once
  // A kill was posted (under the registry's lock): the client is as good as gone, and a
  // second CLIENT KILL must not count it again while it closes, since Redis frees a killed
  // client at once.
  bool kill_posted = false;
  // The client's wait while a blocking command (BLPOP, ...) holds it: CLIENT UNBLOCK and
  // CLIENT KILL end it from other threads (server/blocking.h).
  std::mutex blocked_mu;
  std::shared_ptr<BlockedClient> blocked;  // guarded by blocked_mu
  std::atomic<bool> is_blocked{false};     // CLIENT LIST's flag b, the idle timeout
  // Pub/Sub messages and other pushes from other clients (server/pubsub.h).
  PushOutbox push;
  std::atomic<uint64_t> subscribed_channels{0}, subscribed_patterns{0}, subscribed_shard_channels{0};
  // Client-side caching (server/tracking.h): TrackingFlag bits, and the id of the client its
  // invalidations go to (0: itself). Written by its own thread, read by any.
  std::atomic<uint32_t> tracking{0};
  std::atomic<uint64_t> tracking_redirect{0};
  std::atomic<bool> monitoring{false};  // MONITOR (server/monitor.h): CLIENT LIST's flag O
  std::atomic<bool> no_evict{false};    // CLIENT NO-EVICT: CLIENT LIST's flag e
  // Attached as a replica (SYNC, PSYNC; server/replication.h): CLIENT LIST's flag S and type
  // replica; it is never closed for idling, and a command that would reply to it closes it.
  std::atomic<bool> replica{false};
  int fd = -1;  // the socket's descriptor, for CLIENT LIST's fd=; set before the client is listed
  // Redis's client types lapse has (getClientType): a replica, whatever else it does; a
  // subscriber; any other.
  enum class Type { kNormal, kReplica, kPubSub };
  Type type() const {
    if (replica.load(std::memory_order_relaxed)) return Type::kReplica;
    return subscribed() ? Type::kPubSub : Type::kNormal;
  }
  bool subscribed() const {
    return subscribed_channels.load(std::memory_order_relaxed) + subscribed_patterns.load(std::memory_order_relaxed) +
               subscribed_shard_channels.load(std::memory_order_relaxed) >
           0;
  }
};

class ClientRegistry {
 public:
  std::shared_ptr<ClientInfo> Add(std::string addr, std::string laddr, int64_t now_ms, int fd = -1,
                                  bool unix_socket = false);
  void Remove(uint64_t id);
  size_t size() const {
    std::lock_guard lock(mu_);
    return clients_.size();
  }
  void SetName(ClientInfo& info, std::string name) {
    std::lock_guard lock(mu_);
    info.name = std::move(name);
  }
  std::string Name(const ClientInfo& info) const {
    std::lock_guard lock(mu_);
    return info.name;
  }
  // The ACL user a client is logged in as (CLIENT LIST's user=, CLIENT KILL USER).
  void SetUser(ClientInfo& info, std::string user) {
    std::lock_guard lock(mu_);
    info.user = std::move(user);
  }
  std::string User(const ClientInfo& info) const {
    std::lock_guard lock(mu_);
    return info.user;
  }
  // Calls fn(ClientInfo&) for every client, holding the registry's lock: fn must not call
  // back into the registry.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    std::lock_guard lock(mu_);
    for (auto& [id, info] : clients_) fn(*info);
  }
  // CLIENT LIST TYPE: kAny, or the clients of one ClientInfo::Type.
  enum class TypeFilter { kAny, kNormal, kPubSub, kReplica };
  // One CLIENT LIST line (with trailing newline) per client; `only_id` 0 for all.
  std::string Describe(int64_t now_ms, uint64_t only_id = 0, TypeFilter type = TypeFilter::kAny) const;
  // Calls kill on every client `match` accepts (under the registry's lock: it must not call
  // back here), except `spared_id`, which is only counted: the caller, which closes itself
  // after its reply. Returns how many matched.
  size_t KillMatching(const std::function<bool(const ClientInfo&)>& match, uint64_t spared_id);
  // The client with this id, nullptr if none.
  std::shared_ptr<ClientInfo> Find(uint64_t id) const {
    std::lock_guard lock(mu_);
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second;
  }
  uint64_t NextId() { return next_id_.fetch_add(1); }

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<ClientInfo>> clients_;
  std::atomic<uint64_t> next_id_{1};
};

// MULTI's state: the commands queued until EXEC or DISCARD. Their arguments are copied,
// since the input buffer they came in moves on.
struct Transaction {
  struct Queued {
    const CommandSpec* spec;
    uint32_t stat_id;  // the command's or its subcommand's
    std::vector<std::string> args;
  };
  bool active = false;   // between MULTI and EXEC or DISCARD
  bool aborted = false;  // a command was refused while queued: EXEC answers EXECABORT
  std::vector<Queued> queued;
};

// A key a client WATCHes, in the database it was watched in, which files the client's
// ClientInfo::watcher under the key (engine/watch.h).
struct WatchedKey {
  int db;
  std::string key;
};

struct ClientSession {
  ClientSession(size_t home_thread, std::shared_ptr<ClientInfo> client_info, bool needs_auth)
      : home(home_thread), info(std::move(client_info)), authenticated(!needs_auth) {}

  size_t home;  // index of the event-loop thread the connection lives on
  std::shared_ptr<ClientInfo> info;
  int db = 0;
  bool authenticated;
  std::string user = "default";  // the ACL user, the connection's own copy of info->user
  protocol::RespVersion resp = protocol::RespVersion::kResp2;
  bool close_after_reply = false;  // QUIT, protocol error, kill
  // The reply just written is an error Redis sends raw, outside its error counts (DEBUG
  // ERROR): INFO errorstats, total_error_replies and failed_calls leave it out. The
  // dispatcher clears it once the command is counted.
  bool error_reply_uncounted = false;
  // CLIENT REPLY: kOff drops every reply until ON; SKIP drops the next command's reply
  // (kSkipNext while CLIENT REPLY SKIP runs, kSkipThis while that next command does).
  enum class ReplyMode { kOn, kOff, kSkipNext, kSkipThis };
  ReplyMode reply_mode = ReplyMode::kOn;
  bool local = true;               // connected over loopback (enable-debug-command local)
  double last_charge = 0;          // RU of the previous command (LASTCHARGE)
  Transaction multi;
  std::vector<WatchedKey> watched;
  // The connection's stream (plain or TLS), which a blocked client watches for a disconnect
  // and early replies are written to; nullptr for sessions without one (scripts' fake
  // clients, tests).
  ClientStream* stream = nullptr;
  // What REPLCONF said, for a PSYNC or SYNC that follows.
  ReplicaHandshake replica_handshake;
  // The replication offset right after its last write (WAIT's target).
  int64_t repl_woff = 0;
  // Bytes read while a blocking command waited, for the connection to parse next.
  std::string unread_input;
  Subscriptions subscriptions;
  // RESP2 subscribed mode: only the Pub/Sub commands, PING, QUIT and RESET are served.
  bool in_subscribed_mode() const { return resp == protocol::RespVersion::kResp2 && subscriptions.total() > 0; }
};

}  // namespace lapse::server
