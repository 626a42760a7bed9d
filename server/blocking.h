// File: server/blocking.h
//
// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP),
// as Redis 7.0 serves them, across shards and threads. ICHANGES ... BLOCK uses the same
// sleep and the same parties, but waits on a change feed instead of keys (see the end).
//
// A blocking command first tries its keys in order, holding their shards; if one can serve
// it, it answers at once. Otherwise, in the same atomic step (so that no push can slip in
// between), the client files itself in the wait queue of each key, on the key's shard, and
// its Db counts the key as blocked on. Its coroutine then sleeps on a timer: no polling.
//
// Any write to a blocked-on key adds it to the writing thread's engine::ReadyKeys() (Db::Touch).
// After each command, the thread that wrote serves the waiters of its ready keys
// (ServeReadyKeys) before its client's next command, as Redis's handleClientsBlockedOnKeys
// does: a waiter gets the pushed element even if the pusher asks for it right after. A
// transaction or script reports its keys only once it is over, so waiters see all of it or
// none. Waiters of a key are served first come, first served; serving one runs the command
// for it, holding the key's shard (and a BLMOVE's destination's), and writes its reply.
//
// Who ends a wait. Four parties may: a server (the key became ready), the timer (timeout),
// CLIENT UNBLOCK, and a kill or disconnect. Each first claims the client (one atomic flag);
// only the claimer sets the outcome, after which it wakes the client's coroutine on its own
// thread. A server claims only once it holds the key and knows the key can serve, so a
// claimed client is always served; a timeout that loses the race to a server waits for the
// server's wake-up instead.
//
// Ending the wait, the client removes itself from every queue it joined, whoever ended it:
// queues never hold a finished client for long, and a disconnect leaks nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/db.h"
#include "engine/shard.h"
#include "protocol/reply_writer.h"
#include "server/asio.h"
#include "server/command_table.h"

namespace lapse::server {

class Server;
class ShardSet;
struct ClientInfo;

struct ServeAttempt;
enum class ServeResult { kServed, kNotReady, kWrongType, kClaimLost };
using ServeFn = std::function<ServeResult(ServeAttempt&)>;

struct BlockedClient : std::enable_shared_from_this<BlockedClient> {
  enum class Outcome { kWaiting, kServed, kTimedOut, kUnblockedError, kCancelled };

  explicit BlockedClient(const asio::any_io_executor& ex) : executor(ex), timer(ex) {}

  // True for the one party that may end the wait.
  bool Claim() {
    bool expected = false;
    return claimed.compare_exchange_strong(expected, true, std::memory_order_acq_rel);
  }
  // Called by the claimer: records how the wait ended and wakes the client.
  void Finish(Outcome how);

  asio::any_io_executor executor;  // the client's thread
  asio::steady_timer timer;        // the timeout, and the wake-up (cancelled)
  std::atomic<bool> claimed{false};
  std::atomic<bool> finished{false};  // `outcome`, `reply` and `ru` are written
  Outcome outcome = Outcome::kWaiting;
  std::string reply;  // the served command's reply
  double ru = 0;      // what serving it cost
  int db = 0;
  protocol::RespVersion resp = protocol::RespVersion::kResp2;
  // The command as sent, for the append-only log: serving it logs the pop it made.
  std::vector<std::string> command;
  // Serves the command from a ready key. It owns copies of whatever it needs: it runs on
  // other threads while the client sleeps.
  ServeFn serve;
  std::vector<uint32_t> extra_shards;  // held with the ready key's while serving (a destination)
  // What the client sent while it waited (its thread only).
  std::string unread;
  // When the wait times out, kept so that a wake-up for push messages can re-arm the timer.
  asio::steady_timer::time_point deadline = asio::steady_timer::time_point::max();
  // Pushes (Pub/Sub messages, invalidations) reached the client while it waits (its thread only).
  bool push_pending = false;
};

// One try at serving a blocking command from one of its keys, holding the key's shard (and
// any other the command declared). The same function serves the command when it arrives and
// later, when a write made the key ready.
struct ServeAttempt {
  ShardSet& shards;
  engine::Shard& shard;
  engine::Db& db;
  std::string_view key;
  int64_t now_ms;
  const Server& server;
  BlockedClient& client;
  RequestCharge charge{};
  // The served command's reply, in the client's protocol.
  protocol::ReplyWriter Reply() { return protocol::ReplyWriter(&client.reply, client.resp); }
  // Call once the key is known to serve, before changing anything; false means another
  // party ended the wait (change nothing then).
  bool Claim() { return client.Claim(); }
};

struct BlockRequest {
  std::vector<std::string_view> keys;  // in the order they are tried
  // A key on another shard that serving also writes (BLMOVE's destination).
  std::optional<std::string_view> destination;
  int64_t timeout_ms = 0;  // 0 waits forever
  ServeFn serve;
  // What it answers when it may not block and nothing serves it: a null array (BLPOP), or,
  // with this set, a null bulk (BLMOVE). A timeout always answers a null array.
  bool null_bulk_at_once = false;
  // Redis 7.0's serveClientBlockedOnList pops for a woken BLPOP, BRPOP, BLMOVE or BRPOPLPUSH
  // without raising server.dirty, so such a pop counts no change toward `save` rules; served
  // at once, it counts as any pop does. BLMPOP's woken pop does count.
  bool woken_pop_uncounted = false;
};

// The wait queues, one map per shard; each is only touched holding its shard.
class BlockingRegistry {
 public:
  explicit BlockingRegistry(size_t shards) : shards_(shards) {}

  void Add(uint32_t shard, int db, std::string_view key, std::shared_ptr<BlockedClient> client);
  void Remove(uint32_t shard, int db, std::string_view key, const BlockedClient* client);
  // The clients waiting on a key, oldest first (some may already be claimed).
  std::vector<std::shared_ptr<BlockedClient>> Waiters(uint32_t shard, int db, std::string_view key) const;

  // At shutdown, once the threads have stopped: drops the queues' references, so that each
  // blocked client (and its timer) goes with its coroutine, inside its io_context's shutdown.
  void Clear() {
    for (PerShard& s : shards_) s.queues.clear();
  }

  // INFO clients blocked_clients.
  std::atomic<int64_t> blocked_clients{0};
  // INFO clients clients_in_timeout_table: those of them blocked with a timeout.
  std::atomic<int64_t> clients_in_timeout_table{0};

 private:
  using Queue = std::deque<std::shared_ptr<BlockedClient>>;
  struct PerShard {
    std::map<std::pair<int, std::string>, Queue, std::less<>> queues;
  };
  std::vector<PerShard> shards_;
};

// An awaitable that is already done: what a blocking command returns when it answered
// without blocking (a bad argument), so that only BlockOn itself is a coroutine frame.
awaitable<void> Answered();

// Runs a blocking command for `c`'s client: at once when a key can serve it or the client
// may not block (inside MULTI or a script: a timeout's reply then), else once served, timed
// out, unblocked or disconnected.
awaitable<void> BlockOn(ConnCommand& c, BlockRequest request);

// The two halves of a wait, for a blocking command that waits on something other than keys
// (ICHANGES waits on a container's change feed, which wakes it through Claim and Finish):
// ArmBlockTimeout sets the client's timeout (0: forever) before it is registered anywhere;
// SleepWhileBlocked sends the replies pipelined before the command, shows the client as
// blocked (CLIENT LIST, CLIENT UNBLOCK, kill) and sleeps, without polling, until a party
// ended the wait and set client->outcome. Keeps what the client sent meanwhile for later.
// Pushes that reach the client meanwhile (Pub/Sub messages, invalidations of other clients'
// writes) are written as they come.
void ArmBlockTimeout(BlockedClient& client, int64_t timeout_ms);
awaitable<void> SleepWhileBlocked(ConnCommand& c, std::shared_ptr<BlockedClient> client);

// After a command: serves the clients blocked on the keys this thread's writes made ready.
void ServeReadyKeys(Server& server);

// CLIENT UNBLOCK: ends `info`'s wait as a timeout (or with an UNBLOCKED error); false when
// it was not blocked.
bool UnblockClient(ClientInfo& info, bool with_error);
// A kill or disconnect: ends the wait without a reply.
void CancelBlock(ClientInfo& info);
// Push messages reached a RESP3 client: if it is blocked, its wait writes them now, as Redis
// does, instead of after the blocking command's reply. Call on the client's thread; false
// when the client is not blocked.
bool WakeBlockedForPush(ClientInfo& info);

// Parses a blocking command's timeout (seconds, decimals allowed) as Redis does; replies
// Redis's error and returns false on bad input.
bool ParseBlockTimeout(std::string_view text, int64_t* timeout_ms, protocol::ReplyWriter& reply);

}  // namespace lapse::server
