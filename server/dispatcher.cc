#include "server/dispatcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <utility>

#include "engine/item_json.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/blocking.h"
#include "server/client_stream.h"
#include "server/dirty_count.h"
#include "server/script_undo.h"
#include "server/server.h"
#include "server/transaction.h"

namespace lapse::server {

namespace errors = protocol::errors;

namespace {
// A command is charged differently when it was refused; its reply, written from `before` on,
// then starts with an error.
bool RepliedWithError(const std::string& out, size_t before) { return out.size() > before && out[before] == '-'; }
}  // namespace

Dispatcher::Dispatcher(Server& server, ClientSession& session) : server_(server), session_(session) {}

void Dispatcher::ChargeRefusal() {
  session_.last_charge = server_.SettleCharge(RequestCharge{}, true, server_.clock().NowMs());
}

Dispatcher::Admission Dispatcher::Admit(const std::vector<std::string_view>& args) {
  Admission verdict;
  const CommandSpec* spec = server_.commands().Find(args[0]);
  if (spec == nullptr) {
    RecordLastCommand(nullptr);
    verdict.error = errors::UnknownCommand(args[0], args.data() + 1, args.size() - 1);
    return verdict;
  }
  verdict.spec = spec;
  verdict.stat_id = spec->stat_id;
  // A container's subcommand is a command of its own to Redis: its own arity, its own name.
  const std::string* name = &spec->name;
  int arity = spec->arity;
  if (!spec->subcommands.empty() && args.size() > 1) {
    const SubcommandSpec* sub = spec->FindSubcommand(args[1]);
    if (sub == nullptr) {
      // Like Redis, no command was found: nothing to count a rejection against.
      RecordLastCommand(nullptr);
      verdict.spec = nullptr;
      verdict.error = errors::UnknownSubcommand(args[1], spec->name);
      return verdict;
    }
    name = &sub->name;
    arity = sub->arity;
    verdict.stat_id = sub->stat_id;
  }
  // Like Redis, a command counts as the client's last even when refused below.
  RecordLastCommand(name);
  // Redis checks arity before authentication, so a malformed command says so even then.
  if (!ArityOk(arity, args.size())) {
    verdict.error = errors::WrongArity(*name);
  } else if ((spec->flags & kProtected) && !DebugAllowed()) {
    // Redis refuses a protected command before it asks for authentication.
    verdict.error = errors::kDebugDisabled;
  } else if (!session_.authenticated && !(spec->flags & kNoAuth)) {
    verdict.error = errors::kNoAuth;
  } else if (session_.multi.active && (spec->flags & kNoMulti)) [[unlikely]] {
    verdict.error = "ERR Command not allowed inside a transaction";
  } else if (RefusedByAcl(*spec, verdict.stat_id, args, &verdict.error)) [[unlikely]] {
    // verdict.error holds the NOPERM error
  } else if (RefusedForMemory(*spec)) {
    verdict.error = errors::kOom;
  } else if (session_.in_subscribed_mode() && !AllowedWhileSubscribed(*spec)) [[unlikely]] {
    verdict.error = errors::NotInSubscribedMode(*name);
  } else if (server_.running_scripts().busy_count() > 0 && !AllowedWhileBusy(*spec, args)) [[unlikely]] {
    verdict.error = BusyError();
  } else if ((spec->flags & kContainerArg) && args.size() > 1 && !engine::ValidContainerName(args[1])) {
    verdict.error = errors::kInvalidContainerName;
  }
  return verdict;
}

namespace {
// A command's full name by its statistics slot: "get", "client|kill".
const std::string& FullName(const CommandSpec& spec, uint32_t stat_id) {
  for (const SubcommandSpec& sub : spec.subcommands) {
    if (sub.stat_id == stat_id) return sub.name;
  }
  return spec.name;
}
}  // namespace

std::optional<AclDenial> Dispatcher::AclDenies(const CommandSpec& spec, uint32_t stat_id,
                                               const std::vector<std::string_view>& args) {
  std::shared_ptr<const AclUser> user = server_.acl().Find(session_.user);
  // A deleted user's client is being disconnected: it may run nothing meanwhile.
  if (user == nullptr) return AclDenial{AclDenial::kCommand, FullName(spec, stat_id)};
  return CheckCommand(*user, spec, stat_id, FullName(spec, stat_id), Args(args));
}

bool Dispatcher::CheckAcl(const CommandSpec& spec, uint32_t stat_id, const std::vector<std::string_view>& args,
                          std::string* error) {
  std::optional<AclDenial> denial = AclDenies(spec, stat_id, args);
  if (!denial) return false;
  *error = RefuseForAcl(server_, session_, *denial, session_.multi.active ? "multi" : "toplevel");
  return true;
}

// What Redis 7.0 serves a RESP2 client that has subscriptions: the replies of anything else
// could not be told from its messages.
bool Dispatcher::AllowedWhileSubscribed(const CommandSpec& spec) {
  if (spec.flags & kPubSub) return spec.name != "publish" && spec.name != "spublish" && spec.name != "pubsub";
  return spec.name == "ping" || spec.name == "quit" || spec.name == "reset";
}

// What Redis 7.0 still serves while a script is busy: connection set-up, transactions'
// bookkeeping, the kill commands and SHUTDOWN NOSAVE.
bool Dispatcher::AllowedWhileBusy(const CommandSpec& spec, const std::vector<std::string_view>& args) {
  if (spec.flags & kAllowBusy) return true;
  if (args.size() < 2) return false;
  if (spec.name == "script" || spec.name == "function") return protocol::EqualsIgnoreCase(args[1], "KILL");
  if (spec.name == "shutdown") return protocol::EqualsIgnoreCase(args[1], "NOSAVE");
  return false;
}

std::string_view Dispatcher::BusyError() const {
  return server_.running_scripts().BusyIsFunction() ? errors::kBusyFunction : errors::kBusyScript;
}

bool Dispatcher::RefusedForMemory(const CommandSpec& spec) {
  bool refusable = (spec.flags & kDenyOom) != 0;
  if (session_.multi.active) [[unlikely]] {
    if (spec.name == "exec") {
      refusable = std::any_of(session_.multi.queued.begin(), session_.multi.queued.end(),
                              [](const Transaction::Queued& q) { return (q.spec->flags & kDenyOom) != 0; });
    } else {
      refusable = spec.name != "discard" && spec.name != "quit" && spec.name != "reset";
    }
  }
  // Eviction runs before every command, as Redis's performEvictions does, refusable or not.
  bool out_of_memory = server_.OutOfMemory();
  return refusable && out_of_memory;
}

void Dispatcher::Refuse(const Admission& admission, protocol::ReplyWriter& reply) {
  size_t before = reply.buffer()->size();
  if (admission.spec != nullptr) {
    ThreadCounters::Bump(server_.counters(session_.home).per_command[admission.stat_id].rejected);
  }
  // Redis answers a refused EXEC in EXECABORT's words and discards, even outside MULTI
  // (which unwatches every key).
  if (admission.spec != nullptr && admission.spec->name == "exec") [[unlikely]] {
    EndTransaction(server_, session_);
    reply.Error(errors::ExecAbortBecause(admission.error));
  } else {
    if (session_.multi.active) session_.multi.aborted = true;
    reply.Error(admission.error);
  }
  server_.error_stats().CountIfError(*reply.buffer(), before);
}

std::chrono::steady_clock::time_point Dispatcher::CountCall(const CommandSpec& spec, uint32_t stat_id,
                                                            std::chrono::steady_clock::time_point start,
                                                            const std::vector<std::string_view>& args,
                                                            const std::string& out, size_t before) {
  auto end = std::chrono::steady_clock::now();
  auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start);
  bool uncounted = std::exchange(session_.error_reply_uncounted, false);
  std::optional<ReplyErrors> reply_errors = std::exchange(handler_reply_errors_, std::nullopt);
  uint64_t failures = reply_errors ? reply_errors->FailedCalls() : !uncounted && RepliedWithError(out, before);
  bool failed = failures > 0;
  // `save` rules count changes as Redis does (rdb_changes_since_last_save); EXEC and EVAL
  // count through the commands they run. A handler's own count may come from a read
  // (PFCOUNT's cached estimate).
  std::optional<uint64_t> counted = std::exchange(handler_changes_, std::nullopt);
  uint64_t changes = 0;
  if (counted && !failed) {
    changes = *counted;
  } else if ((spec.flags & kWrite) && !failed) {
    changes = DirtyChanges(spec.name, Args(args), std::string_view(out).substr(before));
  }
  if (ScriptUndo* undo = ActiveScriptUndo()) [[unlikely]] {
    // Held back until the script's run counts; the arguments only for whoever shows them.
    bool shown = server_.monitors().any() || server_.slowlog().Wants(elapsed.count() / 1000);
    undo->HoldCall(ScriptUndo::HeldCall{&spec, stat_id, elapsed, failed, changes, session_.db, shown,
                                        shown ? std::vector<std::string>(args.begin(), args.end())
                                              : std::vector<std::string>{}});
    return end;
  }
  RecordCall(spec, stat_id, elapsed, failed, changes, args, session_.db);
  // A script's reply may fail it more than once (server/reply_errors.h).
  if (failures > 1) [[unlikely]] {
    ThreadCounters::Bump(server_.counters(session_.home).per_command[stat_id].failed, failures - 1);
  }
  return end;
}

void Dispatcher::RecordCall(const CommandSpec& spec, uint32_t stat_id, std::chrono::nanoseconds elapsed, bool failed,
                            uint64_t changes, const std::vector<std::string_view>& args, int db) {
  CommandCounters& cc = server_.counters(session_.home).per_command[stat_id];
  ThreadCounters::Bump(cc.calls);
  ThreadCounters::Bump(cc.nsec, static_cast<uint64_t>(elapsed.count()));
  if (failed) ThreadCounters::Bump(cc.failed);
  if (changes > 0) server_.persistence().CountChanges(changes);
  int64_t micros = elapsed.count() / 1000;
  // As Redis records them: whole microseconds, and spikes in whole milliseconds.
  if (server_.latency_tracking()) cc.Histogram().Record(micros * 1000);
  server_.latency().AddSampleIfNeeded((spec.flags & kFast) ? "fast-command" : "command", micros / 1000);
  // A script's call held back without its arguments had nobody to show them to.
  if (args.empty()) [[unlikely]] return;
  if (server_.slowlog().Wants(micros) && !(spec.flags & kSkipSlowlog)) [[unlikely]] LogSlowCommand(spec, args, micros);
  if (server_.monitors().any() && !MonitoredBeforeRun(spec)) [[unlikely]] FeedMonitors(spec, stat_id, args, db);
}

void Dispatcher::CountErrorReply(const std::string& out, size_t at) {
  if (handler_reply_errors_) [[unlikely]] {
    for (const std::string& line : handler_reply_errors_->counted) CountErrorLine(line);
    return;
  }
  // DEBUG ERROR's reply is counted nowhere, as in Redis.
  if (session_.error_reply_uncounted || !RepliedWithError(out, at)) [[likely]] return;
  std::string_view reply = std::string_view(out).substr(at);
  CountErrorLine(reply.substr(0, reply.find("\r\n") + 2));
}

void Dispatcher::CountErrorLine(std::string_view line) {
  if (ScriptUndo* undo = ActiveScriptUndo()) [[unlikely]] return undo->HoldError(line);
  server_.error_stats().CountIfError(std::string(line), 0);
}

// Redis shows a script's EVAL or FCALL before the commands the script runs, and a blocking
// command when it starts to wait (once, even if it waits); any other command once it has run,
// so that a SELECT shows the database it selected.
bool Dispatcher::MonitoredBeforeRun(const CommandSpec& spec) { return (spec.flags & (kSumsCharges | kBlocking)) != 0; }

void Dispatcher::FeedMonitorsBeforeRun(const CommandSpec& spec, const std::vector<std::string_view>& args) {
  if (server_.monitors().any() && MonitoredBeforeRun(spec)) [[unlikely]] FeedMonitors(spec, spec.stat_id, args, session_.db);
}

void Dispatcher::FeedMonitors(const CommandSpec& spec, uint32_t stat_id, const std::vector<std::string_view>& args,
                              int db) {
  // EVAL and FCALL are on Redis's hidden list only because they are shown before they run.
  if (!(spec.flags & kSumsCharges) && HiddenFromMonitor(server_.commands().stat_name(stat_id))) return;
  std::string_view origin = tracking_context_.in_script ? std::string_view("lua") : session_.info->addr;
  server_.monitors().Feed(db, origin, RedactedArgs(spec, args));
}

void Dispatcher::LogSlowCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, int64_t micros) {
  // Like Redis, passwords never reach the log: AUTH's arguments, HELLO's AUTH pair and
  // everything after ACL SETUSER.
  std::vector<std::string_view> logged = RedactedArgs(spec, args);
  server_.slowlog().Add(logged, micros, static_cast<int64_t>(std::time(nullptr)), session_.info->addr,
                        server_.clients().Name(*session_.info));
}

void Dispatcher::Queue(const Admission& admission, const std::vector<std::string_view>& args,
                       protocol::ReplyWriter& reply) {
  const CommandSpec& spec = *admission.spec;
  Transaction& multi = session_.multi;
  // Like Redis, a transaction already doomed keeps nothing: EXEC will run none of it.
  if (multi.aborted || session_.info->watcher.IsDirty()) return reply.SimpleString("QUEUED");
  multi.queued.push_back(
      Transaction::Queued{&spec, admission.stat_id, std::vector<std::string>(args.begin(), args.end())});
  session_.info->multi_queued.store(static_cast<int64_t>(multi.queued.size()), std::memory_order_relaxed);
  reply.SimpleString("QUEUED");
}

bool Dispatcher::DebugAllowed() const {
  switch (server_.settings().enable_debug_command) {
    case Settings::DebugAccess::kYes:
      return true;
    case Settings::DebugAccess::kLocal:
      return session_.local;
    case Settings::DebugAccess::kNo:
      break;
  }
  return false;
}

uint32_t Dispatcher::ShardOf(const CommandSpec& spec, const std::vector<std::string_view>& args) const {
  // A keyed command called without its key (OBJECT HELP) may run on any shard.
  if ((spec.flags & kItemKey) && args.size() > 2) return server_.shards().ShardForItem(args[1], args[2]);
  size_t pos = static_cast<size_t>(spec.first_key);
  return pos < args.size() ? server_.shards().ShardFor(args[pos]) : static_cast<uint32_t>(session_.home);
}

void Dispatcher::RunShardCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out) {
  protocol::ReplyWriter writer(out, session_.resp);
  size_t before = out->size();
  // The charge is settled holding the shard: an item's container is kept alive by the
  // shard's part of it, which background reclamation may free once the shard is let go.
  double charge = server_.shards().WithShard(ShardOf(spec, args), [&](engine::Shard& shard) {
    ShardCommand cmd{shard, shard.db(session_.db), std::span(args), writer, server_.clock().NowMs(), server_};
    std::get<ShardHandler>(spec.handler)(cmd);
    handler_changes_ = cmd.changes;
    handler_reply_errors_.reset();
    bool rejected = RepliedWithError(*out, before);
    // Logged holding the shard: two writes to one key reach the log in the order they ran.
    if ((spec.flags & kWrite) && !rejected && server_.aof().capturing() && !unlogged_) [[unlikely]] {
      server_.aof().Log(session_.db, LoggedForm(spec, Args(args), std::string_view(*out).substr(before), cmd.now_ms));
    }
    return server_.SettleCharge(cmd.charge, rejected, cmd.now_ms);
  });
  RecordCharge(spec, charge);
  CountErrorReply(*out, before);
}

void Dispatcher::SettleConnCharge(const CommandSpec& spec, const ConnCommand& cmd, bool rejected) {
  RecordCharge(spec, server_.SettleCharge(cmd.charge, rejected, server_.clock().NowMs()));
}

void Dispatcher::RunConnCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out) {
  protocol::ReplyWriter reply(out, session_.resp);
  size_t before = out->size();
  ConnCommand cmd{session_, server_, std::span(args), reply};
  cmd.dispatcher = this;
  UncapturedWrite uncaptured(*this, spec);
  bool logged = LogBeforeRun(spec, args);
  std::get<ConnHandler>(spec.handler)(cmd);
  handler_changes_ = cmd.changes;
  handler_reply_errors_.reset();
  if (logged) server_.aof().SettlePending(RepliedWithError(*out, before));
  SettleConnCharge(spec, cmd, RepliedWithError(*out, before));
  CountErrorReply(*out, before);
}

awaitable<void> Dispatcher::RunFanoutCommand(const CommandSpec& spec, const std::vector<std::string_view>& args,
                                             std::string* out) {
  protocol::ReplyWriter reply(out, session_.resp);
  size_t before = out->size();
  size_t flushed = flushed_;
  ConnCommand cmd{session_, server_, std::span(args), reply};
  cmd.dispatcher = this;
  if (!(spec.flags & kSumsCharges)) {
    // A blocking pop is logged when it is served, holding its shards (server/blocking.cc).
    std::optional<UncapturedWrite> uncaptured;
    if (!(spec.flags & kBlocking) || spec.name == "xreadgroup") uncaptured.emplace(*this, spec);
    bool logged = LogBeforeRun(spec, args);
    co_await std::get<FanoutHandler>(spec.handler)(cmd);
    handler_changes_ = cmd.changes;
    handler_reply_errors_.reset();
    // A blocking command may have sent the replies before its own (FlushReplies).
    before -= flushed_ - flushed;
    if (logged) server_.aof().SettlePending(RepliedWithError(*out, before));
    SettleConnCharge(spec, cmd, RepliedWithError(*out, before));
  } else {
    // A script costs what its commands cost, plus its own refusal charge when it fails;
    // inside EXEC that sum goes on into EXEC's.
    double outer_sum = std::exchange(charge_sum_, 0);
    co_await std::get<FanoutHandler>(spec.handler)(cmd);
    handler_changes_.reset();  // a script's commands counted its changes
    handler_reply_errors_ = std::move(cmd.reply_errors);
    SettleConnCharge(spec, cmd, RepliedWithError(*out, before));
    session_.last_charge = charge_sum_;
    charge_sum_ += outer_sum;
  }
  CountErrorReply(*out, before);
}

Dispatcher::UncapturedWrite::UncapturedWrite(Dispatcher& d, const CommandSpec& spec) : thread_(d.session_.home) {
  if (!(spec.flags & kWrite) || d.server_.aof().capturing()) [[likely]] return;
  // Counted first, then checked again: the sync thread, which activates capture and then
  // reads the counts, sees this write or this write sees capture on.
  CountUncapturedWrite(thread_, 1);
  active_ = !d.server_.aof().capturing();
  if (!active_) CountUncapturedWrite(thread_, -1);
}

Dispatcher::UncapturedWrite::~UncapturedWrite() {
  if (active_) [[unlikely]] CountUncapturedWrite(thread_, -1);
}

bool Dispatcher::LogBeforeRun(const CommandSpec& spec, const std::vector<std::string_view>& args) {
  if (!(spec.flags & kWrite) || !server_.aof().capturing() || unlogged_) [[likely]] return false;
  // A blocking pop is logged by whoever serves it, as the pop it made (server/blocking.cc).
  if ((spec.flags & kBlocking) && spec.name != "xreadgroup") return false;
  server_.aof().LogOnRelease(session_.db, LoggedForm(spec, Args(args), {}, server_.clock().NowMs()));
  return true;
}

// A transaction's or a script's writes are logged together (server/aof.h).
Dispatcher::AofBlock::AofBlock(Server& server, const CommandSpec& spec)
    : aof_(((spec.flags & kSumsCharges) || spec.name == "exec") && server.aof().capturing() ? &server.aof() : nullptr) {
  if (aof_ != nullptr) aof_->BeginBlock();
}

Dispatcher::AofBlock::~AofBlock() {
  if (aof_ != nullptr) aof_->EndBlock();
}

bool Dispatcher::RunAtOnce(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out) {
  if (std::holds_alternative<ShardHandler>(spec.handler)) {
    RunShardCommand(spec, args, out);
  } else if (std::holds_alternative<ConnHandler>(spec.handler)) {
    RunConnCommand(spec, args, out);
  } else {
    return false;
  }
  return true;
}

awaitable<size_t> Dispatcher::Execute(std::span<const std::vector<std::string_view>> batch, std::string* out,
                                      size_t flush_at) {
  ThreadCounters& counters = server_.counters(session_.home);
  size_t ran = 0;
  // The clock reading that ended one command's time starts the next one's when nothing but
  // its own dispatch came between them: one clock read per command of a pipeline instead
  // of two (a tenth of the CPU per command at pipeline 16 went to reading the clock).
  std::optional<std::chrono::steady_clock::time_point> previous_end;
  for (const auto& args : batch) {
    if (session_.close_after_reply || out->size() >= flush_at) break;
    std::optional<std::chrono::steady_clock::time_point> carried = std::exchange(previous_end, std::nullopt);
    ++ran;
    counters.Bump(counters.commands);
    ReplyGate gate(*this, out);
    protocol::ReplyWriter reply(out, session_.resp);
    Admission admission = Admit(args);
    if (!admission.ok()) {
      size_t refused_at = out->size();
      Refuse(admission, reply);
      if (session_.info->replica.load(std::memory_order_relaxed)) [[unlikely]] {
        CloseRepliedReplica(admission.spec, out, refused_at);
      }
      ChargeRefusal();
      EndCachingAnswer(admission.spec);
      continue;
    }
    const CommandSpec& spec = *admission.spec;
    // Replicas are never paused, as in Redis: their acknowledgements must go on.
    if (server_.client_pause().Holds(spec, session_.multi) && !session_.info->replica.load(std::memory_order_relaxed))
        [[unlikely]] {
      if (!co_await WaitOutPause(spec, out)) break;
      carried.reset();
    }
    if (session_.multi.active && !(spec.flags & kNotQueued)) {
      Queue(admission, args, reply);
      continue;
    }
    size_t before = out->size();
    size_t flushed = flushed_;
    auto start = carried ? *carried : std::chrono::steady_clock::now();
    try {
      ShardSet::GiveUpWaitsWhenBusy give_up(server_.running_scripts().busy_counter());
      tracking_context_.client = session_.info.get();
      tracking_context_.provisional.clear();  // what an abandoned command may have left
      TrackingScope tracking_scope(&tracking_context_);
      outer_spec_ = &spec;
      outer_args_ = &args;
      TrackReads(spec, args, ReadPhase::kBefore);
      FeedMonitorsBeforeRun(spec, args);
      AofBlock aof_block(server_, spec);
      if (!RunAtOnce(spec, args, out)) {
        co_await RunFanoutCommand(spec, args, out);
        // Other clients of this thread may have run commands meanwhile.
        Tracking::Current() = &tracking_context_;
      }
      TrackReads(spec, args, ReadPhase::kAfter);
      before -= flushed_ - flushed;
    } catch (const ShardSet::WaitAbandoned&) {
      // It waited for a shard that a busy script holds: nothing was done, and it answers BUSY.
      before -= flushed_ - flushed;
      out->resize(before);
      reply.Error(BusyError());
      server_.error_stats().CountIfError(*out, before);
    }
    auto end = CountCall(spec, admission.stat_id, start, args, *out, before);
    if (out->size() > before && session_.info->replica.load(std::memory_order_relaxed)) [[unlikely]] {
      CloseRepliedReplica(&spec, out, before);
    }
    if (server_.replication().active()) [[unlikely]] NoteWriteOffset(spec);
    // Messages that reached this client while its command ran, its own command's among them,
    // go before that command's reply, as Redis sends them; invalidations go after it, its
    // own command's too (as in Redis 7.0), and before the next command's reply.
    PushOutbox& push = session_.info->push;
    if (!push.empty()) [[unlikely]] out->insert(before, push.TakeMessages());
    if (!tracking_context_.pending.empty()) [[unlikely]] server_.tracking().DeliverPending(tracking_context_);
    if (!push.empty()) [[unlikely]] out->append(push.Take());
    EndCachingAnswer(&spec);
    // Clients blocked on keys this command wrote are served before anything else runs here.
    if (!engine::ReadyKeys().empty()) [[unlikely]] {
      ServeReadyKeys(server_);
      continue;  // their time is not the next command's
    }
    previous_end = end;
  }
  if (!MakeLogDurableAtOnce()) co_await MakeLogDurable();
  // Like Redis's once per event-loop turn: the BCAST changes of the whole batch in one message,
  // and the tracking table brought back under its limit.
  Tracking& tracking = server_.tracking();
  tracking.FlushBroadcasts();
  if (tracking.clients() > 0) [[unlikely]] tracking.EnforceMaxKeys(nullptr);
  co_return ran;
}

// ---- client-side caching ----

void Dispatcher::TrackReads(const CommandSpec& spec, Args args, ReadPhase phase) {
  if (!(session_.info->tracking.load(std::memory_order_relaxed) & kTrackingOn)) [[likely]] return;
  if (spec.flags & kReadOnly) RememberKeys(spec, args, phase);
}

void Dispatcher::RememberKeys(const CommandSpec& spec, Args args, ReadPhase phase) {
  std::vector<std::string>& provisional = tracking_context_.provisional;
  if (phase == ReadPhase::kAfter) provisional.clear();
  const ClientInfo& me = *session_.info;
  uint32_t flags = me.tracking.load(std::memory_order_relaxed);
  if (!(flags & kTrackingOn) || (flags & kTrackingBcast)) return;
  bool caching = flags & kTrackingCaching;
  if (((flags & kTrackingOptin) && !caching) || ((flags & kTrackingOptout) && caching)) return;
  // Shard channels are keys to the command table, not to a cache; items (IGET) are not keys,
  // and their changes are not tracked.
  if (spec.flags & (kPubSub | kItemKey)) return;
  Tracking& tracking = server_.tracking();
  auto remember = [&](std::string_view key) {
    if (tracking.Remember(me, key) && phase == ReadPhase::kBefore) provisional.emplace_back(key);
  };
  if (std::optional<size_t> at = KeyCountIndex(spec)) {
    // Like Redis, a count the arguments cannot satisfy names no key.
    int64_t count = 0;
    if (args.size() <= *at || !protocol::ParseInt64(args[*at], &count) || count < 0 ||
        count > static_cast<int64_t>(args.size() - *at - 1)) {
      return;
    }
    for (size_t i = *at + 1; i <= *at + static_cast<size_t>(count); ++i) remember(args[i]);
    return;
  }
  // SORT_RO reads other keys through BY and GET, but Redis counts only the sorted one.
  if (spec.name == "sort_ro") return remember(args[1]);
  ForEachKeyIndex(spec, args, [&](size_t i) { remember(args[i]); });
}

void Dispatcher::EndCachingAnswer(const CommandSpec* spec) {
  std::atomic<uint32_t>& flags = session_.info->tracking;
  if (!(flags.load(std::memory_order_relaxed) & kTrackingCaching)) [[likely]] return;
  if (session_.multi.active || (spec != nullptr && spec->name == "client")) return;
  flags.fetch_and(~static_cast<uint32_t>(kTrackingCaching), std::memory_order_relaxed);
}

// ---- CLIENT PAUSE and CLIENT REPLY ----

awaitable<bool> Dispatcher::WaitOutPause(const CommandSpec& spec, std::string* out) {
  // The replies of the batch's earlier commands go out now, as Redis writes them meanwhile.
  co_await FlushReplies(out);
  // Like Redis's postponed clients: flag b, and spared by the idle timeout.
  session_.info->is_blocked.store(true, std::memory_order_relaxed);
  co_await server_.client_pause().WaitWhileHeld(spec, session_.multi);
  session_.info->is_blocked.store(false, std::memory_order_relaxed);
  // A client killed (or gone) while it waited must not run its command.
  if (session_.stream != nullptr && !session_.stream->is_open()) {
    session_.close_after_reply = true;
    co_return false;
  }
  co_return true;
}

// WAIT waits for the stream up to the client's last write (Redis's c->woff). Other
// clients' writes propagated meanwhile may be counted in: WAIT then waits a little longer.
void Dispatcher::NoteWriteOffset(const CommandSpec& spec) {
  if ((spec.flags & (kWrite | kSumsCharges)) || spec.name == "exec") session_.repl_woff = server_.replication().offset();
}

// Redis 7.0 sends a replica nothing but the stream: a command of its that would reply (a
// rogue replica, or a client that sent PSYNC by mistake) closes it instead.
void Dispatcher::CloseRepliedReplica(const CommandSpec* spec, std::string* out, size_t before) {
  spdlog::warn("Replica generated a reply to command '{}', disconnecting it: addr={}", spec ? spec->name : "<unknown>",
               session_.info->addr);
  out->resize(before);
  session_.close_after_reply = true;
}

Dispatcher::ReplyGate::ReplyGate(Dispatcher& d, std::string* out)
    : dispatcher_(d), out_(out), start_(out->size()), flushed_(d.flushed_) {
  ClientSession::ReplyMode& mode = d.session_.reply_mode;
  if (mode == ClientSession::ReplyMode::kSkipNext) mode = ClientSession::ReplyMode::kSkipThis;
}

Dispatcher::ReplyGate::~ReplyGate() {
  ClientSession::ReplyMode& mode = dispatcher_.session_.reply_mode;
  if (mode != ClientSession::ReplyMode::kOff && mode != ClientSession::ReplyMode::kSkipThis) [[likely]] return;
  // What was written to the client meanwhile (FlushReplies) is no longer in `out`.
  size_t gone = dispatcher_.flushed_ - flushed_;
  out_->resize(std::min(out_->size(), start_ > gone ? start_ - gone : 0));
  if (mode == ClientSession::ReplyMode::kSkipThis) mode = ClientSession::ReplyMode::kOn;
}

bool Dispatcher::MakeLogDurableAtOnce() {
  AppendOnlyFile& aof = server_.aof();
  if (aof.WantsFsync() && session_.stream != nullptr) return false;
  aof.BeforeReply();
  return true;
}

awaitable<void> Dispatcher::MakeLogDurable() {
  AppendOnlyFile& aof = server_.aof();
  // Under appendfsync always, as Redis does once per event-loop turn: the thread's other
  // clients whose requests are ready run theirs first, and the first of them back here
  // fsyncs for all (group commit); the others find their writes already durable.
  if (aof.WantsFsync() && session_.stream != nullptr) {
    co_await asio::post(server_.shards().context(session_.home), use_awaitable);
  }
  aof.BeforeReply();
}

awaitable<void> Dispatcher::FlushReplies(std::string* out) {
  if (out->empty() || session_.stream == nullptr) co_return;
  if (!MakeLogDurableAtOnce()) co_await MakeLogDurable();
  boost::system::error_code ec;
  co_await session_.stream->Write(asio::buffer(*out), ec);
  ThreadCounters& counters = server_.counters(session_.home);
  counters.Bump(counters.writes_processed);
  counters.Bump(counters.net_output_bytes, out->size());
  flushed_ += out->size();
  out->clear();
}

bool Dispatcher::AddFootprint(const CommandSpec& spec, const std::vector<std::string_view>& args,
                              std::vector<uint32_t>& ids) const {
  ShardSet& shards = server_.shards();
  if (std::holds_alternative<ShardHandler>(spec.handler)) {
    ids.push_back(ShardOf(spec, args));
  } else if ((spec.flags & kItemKey) && args.size() > 2) {
    ids.push_back(shards.ShardForItem(args[1], args[2]));
  } else if (spec.first_key > 0) {
    ForEachKeyIndex(spec, Args(args), [&](size_t i) { ids.push_back(shards.ShardFor(args[i])); });
  } else if (!(spec.flags & (kConnection | kPubSub))) {
    // No keys to go by (FLUSHALL, KEYS, INFO, container-wide commands): every shard.
    ids.resize(shards.size());
    for (uint32_t id = 0; id < ids.size(); ++id) ids[id] = id;
    return false;
  }
  return true;
}

std::vector<uint32_t> Dispatcher::TransactionFootprint() const {
  ShardSet& shards = server_.shards();
  std::vector<uint32_t> ids;
  for (const WatchedKey& w : session_.watched) ids.push_back(shards.ShardFor(w.key));
  std::vector<std::string_view> args;
  for (const Transaction::Queued& q : session_.multi.queued) {
    args.assign(q.args.begin(), q.args.end());
    if (!AddFootprint(*q.spec, args, ids)) break;
  }
  return ids;
}

awaitable<void> Dispatcher::RunTransaction(protocol::ReplyWriter& reply) {
  std::string* out = reply.buffer();
  if (!session_.multi.active) {
    ChargeRefusal();
    co_return reply.Error(errors::kExecWithoutMulti);
  }
  if (session_.multi.aborted) {
    EndTransaction(server_, session_);
    ChargeRefusal();
    co_return reply.Error(errors::kExecAbort);
  }
  std::optional<ShardSet::AtomicStep> step;
  try {
    step.emplace(server_.shards(), TransactionFootprint());
  } catch (const ShardSet::WaitAbandoned&) {
    EndTransaction(server_, session_);
    ChargeRefusal();
    co_return reply.Error(errors::ExecAbortBecause(BusyError()));
  }
  bool watched_changed =
      session_.info->watcher.IsDirty() || WatchedKeyExpired(server_, session_, server_.clock().NowMs());
  // Like Redis: unwatch before running, so that the transaction's own writes do not count.
  UnwatchAll(server_, session_);
  if (watched_changed) {
    EndTransaction(server_, session_);
    session_.last_charge = 0;
    co_return reply.NullArray();
  }
  ThreadCounters& counters = server_.counters(session_.home);
  charge_sum_ = 0;
  // Until it ends, CLIENT LIST still shows the client in MULTI (flag x, multi=N), as Redis does.
  const std::vector<Transaction::Queued> queued = std::exchange(session_.multi, Transaction{}).queued;
  size_t header_at = out->size();
  reply.ArrayHeader(queued.size());
  // Like Redis 7.0, the messages a queued command sends its own client (a RESP3 subscriber
  // PUBLISHing to itself) go inside EXEC's array, right before that command's reply. Those
  // other threads' publishers send meanwhile, which Redis could never interleave, go before
  // the array.
  PushOutbox& push = session_.info->push;
  std::string from_others;
  std::vector<std::string_view> args;
  for (size_t i = 0; i < queued.size(); ++i) {
    const Transaction::Queued& q = queued[i];
    args.assign(q.args.begin(), q.args.end());
    counters.Bump(counters.commands);
    if (!push.empty()) [[unlikely]] from_others.append(push.TakeMessages());
    size_t before = out->size();
    auto start = std::chrono::steady_clock::now();
    outer_spec_ = q.spec;
    outer_args_ = &args;
    // Like Redis 7.0, the user's rules are checked again: they may have changed since queuing.
    if (session_.info->acl_restricted.load(std::memory_order_relaxed)) [[unlikely]] {
      if (std::optional<AclDenial> denial = AclDenies(*q.spec, q.stat_id, args)) {
        RefuseForAcl(server_, session_, *denial, "multi");
        reply.Error(NoPermAtExecError(*denial));
        server_.error_stats().CountIfError(*out, before);
        continue;
      }
    }
    TrackReads(*q.spec, args, ReadPhase::kBefore);
    FeedMonitorsBeforeRun(*q.spec, args);
    // Runs without suspending (YieldThread does nothing inside an atomic step).
    if (!RunAtOnce(*q.spec, args, out)) co_await RunFanoutCommand(*q.spec, args, out);
    TrackReads(*q.spec, args, ReadPhase::kAfter);
    CountCall(*q.spec, q.stat_id, start, args, *out, before);
    if (!push.empty()) [[unlikely]] out->insert(before, push.TakeMessages());
  }
  out->insert(header_at, from_others);
  EndTransaction(server_, session_);
  session_.last_charge = charge_sum_;
}

}  // namespace lapse::server
