// File: server/dispatcher_script.cc
//
// The dispatcher's side of scripts: redis.call (RunForScript) and the undo log of a growable
// script step (server/script_undo.h). A script that holds only its declared keys' shards
// keeps, before each write, the pre-images of the keys the command table says the command
// touches, and holds back the command's statistics, charges and events; when a shard it
// strays to is busy, it rolls back and starts over holding every shard (RunScriptStep), so
// that the world sees only the run that counts.
#include <algorithm>
#include <utility>

#include "protocol/reply_writer.h"
#include "server/dispatcher.h"
#include "server/script_undo.h"
#include "server/server.h"

namespace lapse::server {

namespace {
// Whether the pre-images of a command's keys in the caller's database describe everything
// the command may change. Not for commands whose keys the table cannot locate (FLUSHALL,
// SWAPDB), that reach another database (MOVE, COPY ... DB), that work on containers and
// items (their change feed, budgets and item store are not keys), or whose effects leave the
// keyspace (PUBLISH, admin commands, MIGRATE, whose keys reach another server).
bool PreImagesDescribe(const CommandSpec& spec) {
  if (spec.flags & (kItemKey | kContainerArg | kAdmin | kPubSub)) return false;
  if (spec.group == "container") return false;
  if (!(spec.flags & kWrite)) return true;
  if (spec.first_key <= 0 && spec.find_keys == nullptr) return false;
  return spec.name != "move" && spec.name != "copy" && spec.name != "migrate";
}

// As Redis's lookupCommand: the command `args` names, or its subcommand when it has them and
// one is given (with that one's arity and statistics slot); nullptr when either is unknown.
const CommandSpec* FindCommand(const CommandTable& table, const std::vector<std::string_view>& args, int* arity,
                               uint32_t* stat_id) {
  const CommandSpec* spec = table.Find(args[0]);
  if (spec == nullptr) return nullptr;
  *arity = spec->arity;
  *stat_id = spec->stat_id;
  if (!spec->subcommands.empty() && args.size() > 1) {
    const SubcommandSpec* sub = spec->FindSubcommand(args[1]);
    if (sub == nullptr) return nullptr;
    *arity = sub->arity;
    *stat_id = sub->stat_id;
  }
  return spec;
}
}  // namespace

ScriptHost::Refusal Dispatcher::RunForScript(const std::vector<std::string_view>& args, bool read_only,
                                             bool allow_oom, protocol::RespVersion resp, bool logged,
                                             std::string* out) {
  int arity = 0;
  uint32_t stat_id = 0;
  const CommandSpec* spec = FindCommand(server_.commands(), args, &arity, &stat_id);
  if (spec == nullptr) return CountScriptRefusal(ScriptHost::Refusal::kUnknownCommand, nullptr, 0);
  if (!ArityOk(arity, args.size())) return CountScriptRefusal(ScriptHost::Refusal::kWrongArity, spec, stat_id);
  if (spec->flags & (kNoScript | kProtected)) return CountScriptRefusal(ScriptHost::Refusal::kNotAllowed, spec, stat_id);
  if (session_.info->acl_restricted.load(std::memory_order_relaxed)) [[unlikely]] {
    if (std::optional<AclDenial> denial = AclDenies(*spec, stat_id, args)) {
      RefuseForAcl(server_, session_, *denial, "lua");
      *out = NoPermInScriptError(*denial);
      return CountScriptRefusal(ScriptHost::Refusal::kNoPermission, spec, stat_id);
    }
  }
  if (read_only && (spec->flags & kWrite)) return CountScriptRefusal(ScriptHost::Refusal::kWriteInReadOnly, spec, stat_id);
  if ((spec->flags & kDenyOom) && !allow_oom && server_.OverMaxmemory()) {
    return CountScriptRefusal(ScriptHost::Refusal::kOom, spec, stat_id);
  }
  // A script's step may have to grow to the command's shards. They are all taken before the
  // command runs, so that a busy one (ShardBusy) stops the script before this command changed
  // anything; what the script's earlier commands changed, its undo log takes back.
  ShardSet::AtomicStep& step = *ShardSet::CurrentStep();
  if (step.NeedsFootprint()) {
    std::vector<uint32_t> footprint;
    AddFootprint(*spec, args, footprint);
    std::sort(footprint.begin(), footprint.end());
    try {
      for (uint32_t id : footprint) step.Require(id);
      if (step.undo() != nullptr) PrepareUndo(step, *spec, args, footprint);
    } catch (const ShardSet::ShardBusy&) {
      return ScriptHost::Refusal::kRestart;
    }
  }
  // The command answers in the script's protocol (redis.setresp), not the client's.
  protocol::RespVersion client_resp = session_.resp;
  session_.resp = resp;
  size_t before = out->size();
  auto start = std::chrono::steady_clock::now();
  // A script that stepped aside for other clients (a busy one) resumes here: its commands
  // run as its client's, whatever ran on the thread meanwhile.
  Tracking::CommandContext* outer_context = std::exchange(Tracking::Current(), &tracking_context_);
  bool outer_in_script = std::exchange(tracking_context_.in_script, true);
  bool outer_unlogged = std::exchange(unlogged_, !logged);
  if (!RunAtOnce(*spec, args, out)) {
    // A fanout command (DBSIZE, RANDOMKEY) never suspends inside the script's atomic step,
    // so a private io_context runs it to the end here, on this thread.
    asio::io_context inline_context;
    asio::co_spawn(inline_context, RunFanoutCommand(*spec, args, out), asio::detached);
    inline_context.run();
  }
  unlogged_ = outer_unlogged;
  CountCall(*spec, stat_id, start, args, *out, before);
  tracking_context_.in_script = outer_in_script;
  Tracking::Current() = outer_context;
  session_.resp = client_resp;
  // Redis 7.0 tracks the keys the script declared, not those its commands read.
  if ((spec->flags & kReadOnly) && outer_spec_ != nullptr) RememberKeys(*outer_spec_, *outer_args_, ReadPhase::kAfter);
  if (spec->flags & kWrite) {
    int thread = ShardSet::CurrentThreadIndex();
    server_.running_scripts().SlotOf(thread >= 0 ? static_cast<size_t>(thread) : SIZE_MAX).wrote.store(true);
  }
  return ScriptHost::Refusal::kNone;
}

std::optional<bool> Dispatcher::AclAllowsForScript(const std::vector<std::string_view>& args) {
  int arity = 0;
  uint32_t stat_id = 0;
  const CommandSpec* spec = FindCommand(server_.commands(), args, &arity, &stat_id);
  if (spec == nullptr) return std::nullopt;
  if (!session_.info->acl_restricted.load(std::memory_order_relaxed)) return true;
  return !AclDenies(*spec, stat_id, args).has_value();
}

ScriptHost::Refusal Dispatcher::CountScriptRefusal(ScriptHost::Refusal refusal, const CommandSpec* spec,
                                                   uint32_t stat_id) {
  // As Redis's scriptCall: the refusal counts at once as an error (every refusal's text but
  // OOM's starts with ERR) and, for a known command, as its rejected call; the error table
  // the script gets says so (server/reply_errors.h).
  CountErrorLine(refusal == ScriptHost::Refusal::kOom ? "-OOM refused\r\n" : "-ERR refused\r\n");
  if (spec == nullptr) return refusal;
  if (ScriptUndo* undo = ActiveScriptUndo()) undo->HoldRejection(stat_id);
  else ThreadCounters::Bump(server_.counters(session_.home).per_command[stat_id].rejected);
  return refusal;
}

void Dispatcher::PrepareUndo(ShardSet::AtomicStep& step, const CommandSpec& spec,
                             const std::vector<std::string_view>& args, std::span<const uint32_t> footprint) {
  ScriptUndo& undo = *step.undo();
  ShardSet& shards = server_.shards();
  bool describable = PreImagesDescribe(spec);
  if (!step.HoldsAll()) {
    undo.NoteShards(shards, footprint);
    if (describable && !(spec.flags & kWrite)) return;
    int64_t now = server_.clock().NowMs();
    auto for_each_key = [&](auto&& on_key) { ForEachKeyIndex(spec, Args(args), [&](size_t i) { on_key(args[i]); }); };
    bool cheap = describable;
    if (cheap) {
      for_each_key([&](std::string_view key) { cheap = cheap && undo.CanKeep(shards, session_.db, key, now); });
    }
    if (cheap) return for_each_key([&](std::string_view key) { undo.Keep(shards, session_.db, key, now); });
    // What cannot be taken back is done holding every shard (or not at all: ShardBusy, and
    // the script starts over before this command).
    step.RequireAll();
  }
  // Holding every shard, the step can never have to start over: its run counts.
  CommitScriptUndo(undo);
}

void Dispatcher::CommitScriptUndo(ScriptUndo& undo) {
  ShardSet::CurrentStep()->set_undo(nullptr);
  undo.ForgetImages();
  // As the script's own changes: its client's tracking context, in a script (so NOLOOP does
  // not spare it, as when they are sent at once).
  bool outer_in_script = std::exchange(tracking_context_.in_script, true);
  Tracking::CommandContext* outer_context = std::exchange(Tracking::Current(), &tracking_context_);
  for (const ScriptUndo::HeldEvent& e : undo.TakeEvents()) server_.keyspace_events().Release(e);
  Tracking::Current() = outer_context;
  for (const ScriptUndo::HeldCall& call : undo.TakeCalls()) {
    std::vector<std::string_view> args(call.args.begin(), call.args.end());
    RecordCall(*call.spec, call.stat_id, call.elapsed, call.failed, call.changes, args, call.db);
  }
  tracking_context_.in_script = outer_in_script;
  for (const std::string& line : undo.TakeErrors()) server_.error_stats().CountIfError(line, 0);
  for (uint32_t stat_id : undo.TakeRejections()) {
    ThreadCounters::Bump(server_.counters(session_.home).per_command[stat_id].rejected);
  }
  for (AclLogEntry& entry : undo.TakeAclRefusals()) server_.acl().Log(std::move(entry));
  if (double ru = undo.TakeCharge(); ru > 0) {
    RequestCharge charge;
    charge.ru = ru;
    server_.SettleCharge(charge, false, server_.clock().NowMs());  // already in charge_sum_
  }
}

void Dispatcher::RollBackScriptUndo(ScriptUndo& undo) {
  // Restored with the log still attached: the events the restoring makes are dropped too.
  std::vector<ScriptUndo::HeldEvent> happened = undo.RollBack(server_.shards(), server_.clock().NowMs());
  ShardSet::CurrentStep()->set_undo(nullptr);
  server_.aof().DiscardBlock();
  charge_sum_ = undo.charge_mark();
  for (const ScriptUndo::HeldEvent& e : happened) server_.keyspace_events().Release(e);
}

}  // namespace lapse::server
