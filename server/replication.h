// File: server/replication.h
//
// The master side of Redis replication: a Redis 7.0 replica (`replicaof <lapse> <port>`),
// `redis-cli --rdb` and `redis-cli --replica` attach to lapse as they attach to Redis.
//
// Handshake. A replica sends REPLCONF (listening-port, ip-address, capa, rdb-only,
// rdb-filter-only) and then PSYNC <replid> <offset> (or the old SYNC). PSYNC with this
// server's replication id and an offset the backlog still holds continues at once
// (+CONTINUE, then the backlog from that byte); anything else is a full resynchronisation.
//
// Full resynchronisation. The replica waits (newlines once a second keep its read alive)
// until the sync thread can take the tables' one point-in-time view (a BGSAVE or an AOF
// rewrite may be walking, server/persistence.h). Holding every shard, the thread starts the
// view and notes the stream's offset in the same instant: every write before it is in the
// view, every write after it in the stream. It sends +FULLRESYNC <replid> <offset>, walks the
// view into an RDB payload in memory while clients go on, and sends the payload as one bulk
// ($<length>), then what the stream gained meanwhile; from then on the replica is online and
// gets the stream as it is written. Replicas that ask while a walk is being prepared share it.
// Unlike Redis (repl-diskless-sync-delay), nobody waits for more replicas to arrive.
//
// The stream. Every write is propagated in the form the append-only log keeps
// (server/aof_effects.cc: absolute deadlines, effects of non-deterministic commands, scripts
// and transactions as MULTI ... EXEC), with SELECT when the database changes, plus DEL for
// each key deleted by expiry or eviction (a Redis replica never expires keys itself), a PING
// every repl-ping-replica-period seconds, and REPLCONF GETACK * when WAIT needs fresh
// acknowledgements. lapse's own commands (items, containers, field TTLs) are left out, and so
// is lapse-only data from the payload: a Redis replica knows none of them. The stream also
// fills the backlog (repl-backlog-size bytes), created with the first replica and kept, and
// counts master_repl_offset; with no replica ever attached, writes pay nothing for it.
//
// Replicas acknowledge with REPLCONF ACK <offset> (no reply), which WAIT (woken by each
// acknowledgement), ROLE and INFO read.
// A replica whose command would get a reply is disconnected, as Redis 7.0 does; one silent for
// repl-timeout seconds (except an old SYNC client, which never acknowledges) is dropped.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "server/asio.h"
#include "server/config.h"

namespace lapse::server {

class Server;
struct ClientInfo;

// Connection and fan-out writes running now that decided, before taking their shards, not to
// be captured (Dispatcher::UncapturedWrite): the first replica's instant waits for them to end.
// Counted per event-loop thread (`thread`), each slot written by its own thread only.
void CountUncapturedWrite(size_t thread, int64_t delta);
int64_t UncapturedWritesInFlight();

// What a client told with REPLCONF before PSYNC or SYNC; kept by its session.
struct ReplicaHandshake {
  int64_t listening_port = 0;
  std::string ip_address;
  bool capa_eof = false;
  bool capa_psync2 = false;
  bool rdb_only = false;
  bool rdb_filter = false;  // rdb-filter-only given: a payload of only what the filter names
  bool filter_functions = false;
};

class Replication {
 public:
  explicit Replication(Server& server);
  ~Replication();
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  // The sync thread: full resynchronisations, PINGs, timeouts. Stop is idempotent.
  void Start();
  void Stop();

  // Whether writes must be propagated: true once a replica has attached (the backlog lives on).
  bool active() const { return active_.load(std::memory_order_seq_cst); }

  // ---- the stream, from any thread, in the order the writes happened ----
  // Commands run in database `db` (lapse-only commands are skipped).
  void Feed(int db, const std::vector<std::vector<std::string>>& commands);
  // A transaction's or a script's writes, as one piece of the stream: nothing else comes
  // between them; wrapped in MULTI ... EXEC when `wrap`.
  void FeedBlock(const std::vector<std::pair<int, std::vector<std::string>>>& block, bool wrap);
  // A key deleted by expiry or eviction.
  void FeedDelete(int db, std::string_view key);

  // ---- the replica's connection ----
  // PSYNC (`replid`, `offset`) or SYNC (`psync` false), already validated. Writes the replies
  // itself, through the client's outbox. The client is a replica from now on.
  void Attach(const std::shared_ptr<ClientInfo>& client, const ReplicaHandshake& handshake, bool psync,
              std::string_view replid, int64_t offset);
  // REPLCONF ACK from a replica; an empty line (`offset` -1), which a Redis replica sends
  // while it loads a large payload, only shows it is alive, as in Redis.
  void Acknowledge(uint64_t client_id, int64_t offset);
  // A connection that closes.
  void Detach(uint64_t client_id);

  // ---- what commands read ----
  int64_t offset() const { return offset_now_.load(std::memory_order_acquire); }
  std::string replid() const;
  // Online replicas that acknowledged at least `target`.
  size_t CountAcknowledged(int64_t target) const;
  size_t replica_count() const;
  // WAIT: asks every replica for an acknowledgement (REPLCONF GETACK * in the stream).
  void RequestAcknowledgements();
  // WAIT's timer, cancelled (from its own thread) by the next acknowledgement; register it
  // before counting, so that none arriving in between is missed.
  void WakeOnAcknowledgement(const std::shared_ptr<asio::steady_timer>& timer);
  // ROLE's third element: [ip, port, offset] of each online replica.
  struct ReplicaRow {
    std::string ip;
    int64_t port = 0;
    int64_t ack_offset = 0;
    std::string state;
    int64_t lag_s = 0;
  };
  std::vector<ReplicaRow> Replicas(bool online_only) const;
  // INFO replication, after role:master.
  std::string InfoFields() const;
  // INFO stats.
  uint64_t sync_full() const { return sync_full_.load(); }
  uint64_t sync_partial_ok() const { return sync_partial_ok_.load(); }
  uint64_t sync_partial_err() const { return sync_partial_err_.load(); }

 private:
  // kSendBulk: its view's instant passed, the payload is being made; kTransfer: the payload
  // is being handed to its outbox. The stream waits in `pending` in both.
  enum class State { kWaitBgsave, kSendBulk, kTransfer, kOnline };
  struct Replica {
    std::shared_ptr<ClientInfo> client;
    ReplicaHandshake handshake;
    bool psync = true;
    State state = State::kWaitBgsave;
    std::string pending;  // the stream since the view's instant, until the payload has gone
    int64_t ack_offset = 0;
    int64_t ack_time_ms = 0;
    int64_t last_newline_ms = 0;
    bool timed_out = false;
    // The connection has taken the payload from the outbox (seen by the cron): from then on
    // client-output-buffer-limit replica applies to what waits in the outbox, the stream
    // alone, and repl-timeout counts.
    bool payload_sent = false;
  };
  using ReplicaPtr = std::shared_ptr<Replica>;

  // Appends to the stream (mu_ held): backlog, offset, every replica past its view's instant.
  void AppendLocked(std::string_view bytes);
  void SelectLocked(int db);
  // The RESP of `commands` a replica gets (lapse's own left out).
  static void AppendCommands(std::string& out, const std::vector<std::vector<std::string>>& commands);
  void CreateBacklogLocked();
  // Into the replica's outbox; `limited` by client-output-buffer-limit replica (the payload
  // and the replies of the handshake are not, as in Redis).
  void Push(const ReplicaPtr& replica, std::string_view bytes, bool limited);
  // "ip:port" as Redis's logs name a replica.
  static std::string NameOf(const Replica& r);
  void SyncLoop();
  // One full resynchronisation of the replicas waiting now.
  void RunFullSync();
  void Cron(int64_t now_ms);

  Server& server_;
  std::atomic<bool> active_{false};
  mutable std::mutex mu_;
  std::string replid_;
  int64_t offset_ = 0;        // master_repl_offset
  std::atomic<int64_t> offset_now_{0};  // the same, read without the lock
  std::string backlog_;       // the last bytes of the stream
  int64_t backlog_first_ = 0;  // the offset of backlog_'s first byte
  int64_t backlog_size_ = 1 << 20;
  bool backlog_created_ = false;
  int stream_db_ = -1;  // the database the stream last SELECTed; -1 forces a SELECT
  std::vector<ReplicaPtr> replicas_;
  int64_t last_ping_ms_ = 0;
  // client-output-buffer-limit replica, refreshed by the cron.
  std::atomic<int64_t> replica_limit_hard_{256ll << 20}, replica_limit_soft_{64ll << 20}, replica_limit_seconds_{60};

  std::atomic<uint64_t> sync_full_{0}, sync_partial_ok_{0}, sync_partial_err_{0};

  std::mutex ack_waiters_mu_;
  std::vector<std::weak_ptr<asio::steady_timer>> ack_waiters_;

  std::mutex thread_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> stop_requested_{false};  // read by the walk's sink
  bool started_ = false;
  std::thread thread_;
};

}  // namespace lapse::server
