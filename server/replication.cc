// The master side of replication; see server/replication.h for the design.
#include "server/replication.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <random>
#include <unordered_set>

#include "engine/rdb_file.h"
#include "protocol/arg_reader.h"
#include "server/aof.h"
#include "server/client_session.h"
#include "server/command_metadata.h"
#include "server/persistence.h"
#include "server/server.h"

namespace lapse::server {

namespace {

constexpr auto kTick = std::chrono::milliseconds(100);
constexpr int64_t kNewlineEveryMs = 1000;
// Redis 7.0's defaults, which lapse reports and does not let change.
constexpr int64_t kPingPeriodMs = 10'000;  // repl-ping-replica-period
constexpr int64_t kTimeoutMs = 60'000;     // repl-timeout

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string RandomReplid() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 40; ++i) id.push_back(kHex[rd() % 16]);
  return id;
}

// Redis 7.0's commands: a replica gets only these (items, containers and field TTLs are
// lapse's own).
bool IsRedisCommand(std::string_view name) {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> set;
    for (const CommandMetadata& m : RedisCommandMetadata()) {
      if (m.name.find('|') == std::string_view::npos) set.emplace(m.name);
    }
    return set;
  }();
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return names.count(lower) > 0;
}

// The address part of "ip:port" (IPv6 addresses have colons of their own).
std::string IpOf(const std::string& addr) {
  size_t colon = addr.rfind(':');
  return colon == std::string::npos ? addr : addr.substr(0, colon);
}

// Writes the payload into memory. The walk runs on the sync thread, whose cron must go on
// meanwhile (newlines to the replicas waiting for this payload, PINGs to the others): it is
// called from here about once a second.
class PayloadSink final : public engine::rdb::Sink {
 public:
  PayloadSink(std::string* out, std::function<void()> tick, const std::atomic<bool>* stopping)
      : out_(out), tick_(std::move(tick)), stopping_(stopping) {}
  bool Write(std::string_view bytes) override {
    if (stopping_->load(std::memory_order_relaxed)) return false;  // shutting down: the walk ends writing nothing
    out_->append(bytes);
    auto now = std::chrono::steady_clock::now();
    if (now - last_tick_ >= std::chrono::milliseconds(kNewlineEveryMs)) {
      last_tick_ = now;
      tick_();
    }
    return true;
  }

 private:
  std::string* out_;
  std::function<void()> tick_;
  const std::atomic<bool>* stopping_;
  std::chrono::steady_clock::time_point last_tick_ = std::chrono::steady_clock::now();
};

struct alignas(64) UncapturedSlot {
  std::atomic<int64_t> in_flight{0};
};
std::array<UncapturedSlot, 256> uncaptured_writes;

}  // namespace

void CountUncapturedWrite(size_t thread, int64_t delta) {
  uncaptured_writes[thread % uncaptured_writes.size()].in_flight.fetch_add(delta, std::memory_order_seq_cst);
}

int64_t UncapturedWritesInFlight() {
  int64_t total = 0;
  for (const UncapturedSlot& slot : uncaptured_writes) total += slot.in_flight.load(std::memory_order_seq_cst);
  return total;
}

Replication::Replication(Server& server) : server_(server), replid_(RandomReplid()) {}

Replication::~Replication() { Stop(); }

void Replication::Start() {
  std::lock_guard lock(thread_mu_);
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { SyncLoop(); });
}

void Replication::Stop() {
  {
    std::lock_guard lock(thread_mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
  }
  stop_requested_.store(true);
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// ---- the stream ----

void Replication::AppendCommands(std::string& out, const std::vector<std::vector<std::string>>& commands) {
  for (const auto& command : commands) {
    if (!command.empty() && IsRedisCommand(command[0])) AppendCommandResp(out, command);
  }
}

void Replication::Feed(int db, const std::vector<std::vector<std::string>>& commands) {
  std::string bytes;
  AppendCommands(bytes, commands);
  if (bytes.empty()) return;
  std::lock_guard lock(mu_);
  if (!backlog_created_) return;
  SelectLocked(db);
  AppendLocked(bytes);
}

void Replication::FeedBlock(const std::vector<std::pair<int, std::vector<std::string>>>& block, bool wrap) {
  std::lock_guard lock(mu_);
  if (!backlog_created_ || block.empty()) return;
  std::string bytes;
  auto flush = [&] {
    if (!bytes.empty()) AppendLocked(bytes);
    bytes.clear();
  };
  if (wrap) {
    SelectLocked(block.front().first);
    AppendCommandResp(bytes, {"MULTI"});
  }
  for (const auto& [db, command] : block) {
    if (db != stream_db_) {
      flush();
      SelectLocked(db);
    }
    AppendCommands(bytes, {command});
  }
  if (wrap) AppendCommandResp(bytes, {"EXEC"});
  flush();
}

void Replication::FeedDelete(int db, std::string_view key) {
  if (!active()) return;
  std::string bytes;
  AppendCommandResp(bytes, {"DEL", std::string(key)});
  std::lock_guard lock(mu_);
  SelectLocked(db);
  AppendLocked(bytes);
}

void Replication::SelectLocked(int db) {
  if (db == stream_db_) return;
  std::string select;
  AppendCommandResp(select, {"SELECT", std::to_string(db)});
  stream_db_ = db;
  AppendLocked(select);
}

void Replication::AppendLocked(std::string_view bytes) {
  offset_ += static_cast<int64_t>(bytes.size());
  offset_now_.store(offset_, std::memory_order_release);
  backlog_.append(bytes);
  // Trimmed in steps, not on every write: the backlog keeps between one and two sizes.
  if (backlog_.size() > 2 * static_cast<size_t>(backlog_size_)) {
    backlog_.erase(0, backlog_.size() - static_cast<size_t>(backlog_size_));
  }
  for (const ReplicaPtr& r : replicas_) {
    if (r->handshake.rdb_only) continue;
    if (r->state == State::kOnline) {
      Push(r, bytes, r->payload_sent);
    } else if (r->state == State::kSendBulk || r->state == State::kTransfer) {
      r->pending.append(bytes);
    }
  }
}

void Replication::CreateBacklogLocked() {
  // As Redis: a backlog made from scratch gets a new replication id, so that no replica of an
  // earlier history can continue from it.
  replid_ = RandomReplid();
  backlog_created_ = true;
  backlog_.clear();
  stream_db_ = -1;
  active_.store(true, std::memory_order_seq_cst);  // against UncapturedWrite (dispatcher.cc)
  spdlog::info("Replication backlog created, my new replication IDs are '{}' and '{}'", replid_, std::string(40, '0'));
}

void Replication::Push(const ReplicaPtr& replica, std::string_view bytes, bool limited) {
  ClientInfo& client = *replica->client;
  OutputBufferLimit limit = limited ? OutputBufferLimit{replica_limit_hard_.load(), replica_limit_soft_.load(),
                                                        replica_limit_seconds_.load()}
                                    : OutputBufferLimit{};
  // Only what waits in the outbox is counted: the connection takes it all whenever it has
  // written what it took before (the payload among it), so a replica holds at most about
  // twice the limit, and the payload is never counted.
  client.push.Append(bytes, limit, 0, server_.clock().NowMs(), client.kill);
}

// ---- the replica's connection ----

std::string Replication::NameOf(const Replica& r) {
  std::string ip = r.handshake.ip_address.empty() ? IpOf(r.client->addr) : r.handshake.ip_address;
  if (r.handshake.listening_port != 0) return ip + ":" + std::to_string(r.handshake.listening_port);
  return ip + ":<unknown-replica-port>";
}

void Replication::Attach(const std::shared_ptr<ClientInfo>& client, const ReplicaHandshake& handshake, bool psync,
                         std::string_view replid, int64_t offset) {
  auto replica = std::make_shared<Replica>();
  replica->client = client;
  replica->handshake = handshake;
  replica->psync = psync;
  replica->ack_time_ms = WallMs();
  client->replica.store(true, std::memory_order_relaxed);
  std::string name = NameOf(*replica);
  spdlog::info("Replica {} asks for synchronization", name);
  std::lock_guard lock(mu_);
  if (psync) {
    int64_t held = std::min<int64_t>(static_cast<int64_t>(backlog_.size()), backlog_size_);
    int64_t first = offset_ - held + 1;
    bool same_history = replid.size() == replid_.size() && protocol::EqualsIgnoreCase(replid, replid_);
    if (backlog_created_ && same_history && offset >= first && offset <= offset_ + 1) {
      replica->state = State::kOnline;
      replicas_.push_back(replica);
      Push(replica, handshake.capa_psync2 ? "+CONTINUE " + replid_ + "\r\n" : std::string("+CONTINUE\r\n"), false);
      std::string_view tail = std::string_view(backlog_).substr(backlog_.size() - static_cast<size_t>(offset_ + 1 - offset));
      if (!tail.empty()) Push(replica, tail, false);
      sync_partial_ok_.fetch_add(1);
      spdlog::info(
          "Partial resynchronization request from {} accepted. Sending {} bytes of backlog starting from offset {}.",
          name, tail.size(), offset);
      return;
    }
    if (replid != "?") {
      sync_partial_err_.fetch_add(1);
      spdlog::info("Partial resynchronization not accepted: Replication ID mismatch or offset out of range (Replica "
                   "asked for '{}' at {})", replid, offset);
    } else {
      spdlog::info("Full resync requested by replica {}", name);
    }
  }
  sync_full_.fetch_add(1);
  if (!backlog_created_) CreateBacklogLocked();
  replicas_.push_back(replica);
  wake_.notify_all();
}

void Replication::Acknowledge(uint64_t client_id, int64_t offset) {
  {
    std::lock_guard lock(mu_);
    for (const ReplicaPtr& r : replicas_) {
      if (r->client->id != client_id) continue;
      if (offset < 0) {
        r->ack_time_ms = WallMs();
        return;
      }
      r->ack_offset = std::max(r->ack_offset, offset);
      r->ack_time_ms = WallMs();
    }
  }
  std::vector<std::weak_ptr<asio::steady_timer>> waiters;
  {
    std::lock_guard lock(ack_waiters_mu_);
    waiters.swap(ack_waiters_);
  }
  for (const auto& weak : waiters) {
    if (std::shared_ptr<asio::steady_timer> timer = weak.lock()) {
      asio::post(timer->get_executor(), [timer] { timer->cancel(); });
    }
  }
}

void Replication::WakeOnAcknowledgement(const std::shared_ptr<asio::steady_timer>& timer) {
  std::lock_guard lock(ack_waiters_mu_);
  std::erase_if(ack_waiters_, [](const std::weak_ptr<asio::steady_timer>& w) { return w.expired(); });
  ack_waiters_.push_back(timer);
}

void Replication::Detach(uint64_t client_id) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(replicas_.begin(), replicas_.end(), [&](const ReplicaPtr& r) { return r->client->id == client_id; });
  if (it == replicas_.end()) return;
  spdlog::info("Connection with replica {} lost.", NameOf(**it));
  replicas_.erase(it);
}

// ---- what commands read ----

std::string Replication::replid() const {
  std::lock_guard lock(mu_);
  return replid_;
}

size_t Replication::CountAcknowledged(int64_t target) const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const ReplicaPtr& r : replicas_) {
    n += r->state == State::kOnline && !r->handshake.rdb_only && r->ack_offset >= target;
  }
  return n;
}

size_t Replication::replica_count() const {
  std::lock_guard lock(mu_);
  return replicas_.size();
}

void Replication::RequestAcknowledgements() {
  std::string bytes;
  AppendCommandResp(bytes, {"REPLCONF", "GETACK", "*"});
  std::lock_guard lock(mu_);
  if (replicas_.empty()) return;
  AppendLocked(bytes);
}

std::vector<Replication::ReplicaRow> Replication::Replicas(bool online_only) const {
  int64_t now = WallMs();
  std::lock_guard lock(mu_);
  std::vector<ReplicaRow> rows;
  for (const ReplicaPtr& r : replicas_) {
    // ROLE lists the replicas that follow the stream; a payload-only client (redis-cli --rdb)
    // is not one.
    if (online_only && (r->state != State::kOnline || r->handshake.rdb_only)) continue;
    ReplicaRow row;
    row.ip = r->handshake.ip_address.empty() ? IpOf(r->client->addr) : r->handshake.ip_address;
    row.port = r->handshake.listening_port;
    row.ack_offset = r->ack_offset;
    row.state = r->state == State::kOnline ? "online" : r->state == State::kTransfer ? "send_bulk" : "wait_bgsave";
    row.lag_s = (now - r->ack_time_ms) / 1000;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string Replication::InfoFields() const {
  std::vector<ReplicaRow> rows = Replicas(false);
  std::lock_guard lock(mu_);
  std::string out;
  auto line = [&](std::string_view name, const std::string& value) {
    out.append(name).append(":").append(value).append("\r\n");
  };
  line("connected_slaves", std::to_string(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReplicaRow& r = rows[i];
    line("slave" + std::to_string(i), "ip=" + r.ip + ",port=" + std::to_string(r.port) + ",state=" + r.state +
                                          ",offset=" + std::to_string(r.ack_offset) + ",lag=" + std::to_string(r.lag_s));
  }
  int64_t held = std::min<int64_t>(static_cast<int64_t>(backlog_.size()), backlog_size_);
  line("master_failover_state", "no-failover");
  line("master_replid", replid_);
  line("master_replid2", std::string(40, '0'));
  line("master_repl_offset", std::to_string(offset_));
  line("second_repl_offset", "-1");
  line("repl_backlog_active", backlog_created_ ? "1" : "0");
  line("repl_backlog_size", std::to_string(backlog_size_));
  line("repl_backlog_first_byte_offset", std::to_string(backlog_created_ ? offset_ - held + 1 : 0));
  line("repl_backlog_histlen", std::to_string(held));
  return out;
}

// ---- the sync thread ----

void Replication::SyncLoop() {
  std::unique_lock lock(thread_mu_);
  while (!stopping_) {
    wake_.wait_for(lock, kTick);
    if (stopping_) break;
    lock.unlock();
    Cron(WallMs());
    bool waiting = false;
    {
      std::lock_guard repl(mu_);
      for (const ReplicaPtr& r : replicas_) waiting |= r->state == State::kWaitBgsave;
    }
    if (waiting) RunFullSync();
    lock.lock();
  }
}

void Replication::Cron(int64_t now_ms) {
  Settings live = server_.config().Snapshot();
  replica_limit_hard_.store(live.output_limit_replica.hard);
  replica_limit_soft_.store(live.output_limit_replica.soft);
  replica_limit_seconds_.store(live.output_limit_replica.soft_seconds);
  std::vector<std::function<void()>> kills;
  std::lock_guard lock(mu_);
  if (replicas_.empty()) return;
  // Replicas waiting for their payload get a newline a second, which keeps their read alive
  // (Redis's replicas and redis-cli skip it).
  for (const ReplicaPtr& r : replicas_) {
    bool before_payload = r->state == State::kWaitBgsave || r->state == State::kSendBulk;
    if (before_payload && now_ms - r->last_newline_ms >= kNewlineEveryMs) {
      r->last_newline_ms = now_ms;
      Push(r, "\n", false);
    }
    if (r->state == State::kOnline && !r->payload_sent && r->client->push.empty()) {
      r->payload_sent = true;
      r->ack_time_ms = now_ms;  // the replica loads it now, and acknowledges only then
    }
  }
  if (now_ms - last_ping_ms_ >= kPingPeriodMs) {
    last_ping_ms_ = now_ms;
    std::string ping;
    AppendCommandResp(ping, {"ping"});
    AppendLocked(ping);
  }
  for (const ReplicaPtr& r : replicas_) {
    bool acknowledges = r->psync && !r->handshake.rdb_only && r->state == State::kOnline && r->payload_sent;
    if (acknowledges && now_ms - r->ack_time_ms > kTimeoutMs && !r->timed_out) {
      r->timed_out = true;
      spdlog::warn("Disconnecting timedout replica (streaming sync): {}", NameOf(*r));
      if (r->client->kill) kills.push_back(r->client->kill);
    }
  }
  for (const auto& kill : kills) kill();
}

void Replication::RunFullSync() {
  // The replicas of one round share its payload: those that want the same kind of it.
  enum class Kind { kRedis, kWithLapseData, kFunctionsOnly };
  Settings live = server_.config().Snapshot();
  auto kind_of = [&](const Replica& r) {
    if (r.handshake.rdb_filter) return Kind::kFunctionsOnly;
    return r.handshake.rdb_only && live.rdb_lapse_data ? Kind::kWithLapseData : Kind::kRedis;
  };
  Persistence& persistence = server_.persistence();
  std::vector<ReplicaPtr> round;
  Kind kind = Kind::kRedis;
  bool filter_functions = false;
  {
    std::lock_guard lock(mu_);
    for (const ReplicaPtr& r : replicas_) {
      if (r->state != State::kWaitBgsave) continue;
      if (round.empty()) {
        kind = kind_of(*r);
        filter_functions = r->handshake.filter_functions;
      }
      if (kind_of(*r) == kind && r->handshake.filter_functions == filter_functions) round.push_back(r);
    }
  }
  if (round.empty()) return;
  std::unique_ptr<Persistence::BackgroundView> view;
  auto start_round = [&] {
    std::lock_guard lock(mu_);
    // The next write after the instant names its database: the payload leaves none selected.
    stream_db_ = -1;
    for (const ReplicaPtr& r : round) {
      r->state = State::kSendBulk;
      r->pending.clear();
      if (r->psync) Push(r, "+FULLRESYNC " + replid_ + " " + std::to_string(offset_) + "\r\n", false);
    }
  };
  if (kind == Kind::kFunctionsOnly) {
    start_round();
  } else {
    // A write that decided not to be captured before the first replica arrived must end
    // before the instant: after it, it would be in neither the payload nor the stream.
    // Their count only falls once capture is on: the next tick tries again.
    if (UncapturedWritesInFlight() > 0) return;
    // The tables have room for one view: a BGSAVE or a rewrite that walks is waited for.
    if (!persistence.ClaimWalkForReplication()) return;
    server_.shards().RunHoldingAll([&] {
      view = persistence.BeginReplicaView(kind == Kind::kWithLapseData);
      start_round();
    });
  }
  spdlog::info("Starting BGSAVE for SYNC with target: replicas sockets");
  std::string payload;
  PayloadSink sink(&payload, [this] { Cron(WallMs()); }, &stop_requested_);
  bool ok = kind == Kind::kFunctionsOnly ? persistence.WriteFunctionsPayload(sink, filter_functions)
                                         : persistence.WriteReplicaPayload(sink, std::move(view));
  // The payload goes to the outboxes outside the lock, so that writers are not held while it
  // is copied: the stream waits in `pending` (kTransfer), and nothing else is pushed to them.
  std::vector<ReplicaPtr> receiving;
  std::vector<std::function<void()>> kills;
  {
    std::lock_guard lock(mu_);
    for (const ReplicaPtr& r : round) {
      if (std::find(replicas_.begin(), replicas_.end(), r) == replicas_.end()) continue;  // gone meanwhile
      if (!ok) {
        if (r->client->kill) kills.push_back(r->client->kill);
        continue;
      }
      r->state = State::kTransfer;
      receiving.push_back(r);
    }
  }
  for (const auto& kill : kills) kill();
  std::string header = "$" + std::to_string(payload.size()) + "\r\n";
  for (const ReplicaPtr& r : receiving) {
    Push(r, header, false);
    Push(r, payload, false);
  }
  payload = std::string();
  std::lock_guard lock(mu_);
  for (const ReplicaPtr& r : receiving) {
    if (std::find(replicas_.begin(), replicas_.end(), r) == replicas_.end()) continue;
    if (!r->pending.empty()) Push(r, r->pending, false);
    r->pending = std::string();
    r->state = State::kOnline;
    r->ack_time_ms = WallMs();
    spdlog::info("Synchronization with replica {} succeeded", NameOf(*r));
  }
}

}  // namespace lapse::server
