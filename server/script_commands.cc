// File: server/script_commands.cc
//
// Scripting family: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, as in Redis 7.0
// (server/lua_engine.h has the Lua side).
//
// A script runs as one atomic step (server/script_step.h says which shards it holds).
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/dispatcher.h"
#include "server/help_reply.h"
#include "server/server.h"
#include "server/script_step.h"
#include "server/script_undo.h"
#include "server/sha1.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {


// "#!lua [flags=f1,f2,...]" and its newline; Redis's error otherwise.
std::optional<std::string> ParseScriptShebang(std::string_view body, uint32_t* flags) {
  size_t newline = body.find('\n');
  if (newline == std::string_view::npos) return std::string("ERR Invalid script shebang");
  std::string_view line = body.substr(0, newline);
  std::vector<std::string_view> parts = ShebangWords(line);
  if (parts.empty() || parts[0] != "#!lua")
    return "ERR Unexpected engine in script shebang: " + std::string(parts.empty() ? line : parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("flags=")) return "ERR Unknown lua shebang option: " + std::string(parts[i]);
    std::string_view list = parts[i].substr(6);
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view name = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      uint32_t flag = FunctionFlagNamed(name);
      if (flag == 0) return "ERR Unexpected flag in script shebang: " + std::string(name);
      *flags |= flag;
    }
  }
  return std::nullopt;
}

// What EVAL runs, once its arguments, script and flags have passed.
struct PreparedScript {
  std::string sha;
  uint32_t flags = 0;
  Args keys;
  Args argv;
};

// Checks an EVAL's arguments, finds or compiles its script and checks its flags; replies
// with the error and returns nothing when one fails.
std::optional<PreparedScript> PrepareEval(ConnCommand& c, bool by_sha, bool read_only) {
  // As Redis's evalShaCommand: a digest of the wrong length matches nothing, whatever follows.
  constexpr size_t kSha1HexLength = 40;
  if (by_sha && c.args[1].size() != kSha1HexLength) {
    c.reply.Error(errors::kNoScript);
    return std::nullopt;
  }
  int64_t numkeys = 0;
  if (!protocol::ParseInt64(c.args[2], &numkeys)) {
    c.reply.Error(errors::kNotInteger);
    return std::nullopt;
  }
  if (numkeys > static_cast<int64_t>(c.args.size()) - 3) {
    c.reply.Error(errors::kTooManyKeys);
    return std::nullopt;
  }
  if (numkeys < 0) {
    c.reply.Error(errors::kNegativeKeys);
    return std::nullopt;
  }
  PreparedScript p;
  p.sha = by_sha ? protocol::AsciiLower(c.args[1]) : Sha1Hex(c.args[1]);
  LuaEngine& lua = c.server.lua();
  CompiledScript info;
  if (const CompiledScript* known = lua.Compiled(p.sha)) {
    info = *known;  // compiled here before, so in the cache too
  } else {
    std::string body;
    if (by_sha) {
      std::optional<std::string> found = c.server.scripts().Find(p.sha);
      if (!found) {
        c.reply.Error(errors::kNoScript);
        return std::nullopt;
      }
      body = std::move(*found);
    } else {
      body = std::string(c.args[1]);
    }
    // Redis 7 scripts may start with "#!lua [flags=...]": they then obey their flags as
    // functions do, and their code starts on the next line.
    info.shebang = body.starts_with("#!");
    std::optional<std::string> error;
    if (info.shebang) error = ParseScriptShebang(body, &info.flags);
    if (!error) error = lua.Compile(p.sha, info.shebang ? LibraryBody(body) : std::string_view(body), info);
    if (error) {
      c.reply.Error(*error);
      return std::nullopt;
    }
    if (!by_sha) c.server.scripts().Add(p.sha, std::move(body));
  }
  if (info.shebang) {
    bool no_writes = info.flags & kFunctionNoWrites;
    std::string_view refusal;
    if (!no_writes && !(info.flags & kFunctionAllowOom) && c.server.OverMaxmemory()) {
      refusal = "OOM command not allowed when used memory > 'maxmemory'.";
    } else if (read_only && !no_writes) {
      refusal = "ERR Can not execute a script with write flag using *_ro command.";
    }
    if (!refusal.empty()) {
      c.reply.Error(refusal);
      return std::nullopt;
    }
  }
  p.flags = info.flags;
  p.keys = c.args.subspan(3, static_cast<size_t>(numkeys));
  p.argv = c.args.subspan(3 + static_cast<size_t>(numkeys));
  return p;
}

awaitable<void> Eval(ConnCommand& c, bool by_sha, bool read_only) {
  std::optional<PreparedScript> p = PrepareEval(c, by_sha, read_only);
  if (!p) co_return;
  ClientScriptHost host(*c.dispatcher, read_only || (p->flags & kFunctionNoWrites), p->flags & kFunctionAllowOom);
  ScriptCache& cache = c.server.scripts();
  co_await RunScriptStep(
      c, p->keys, cache.FootprintOf(p->sha), [&](ScriptCache::Footprint seen) { cache.SetFootprint(p->sha, seen); },
      [&]() -> awaitable<LuaEngine::Outcome> {
        LuaEngine& engine = c.server.lua();
        co_return co_await RunWatched(c, engine, false,
                                      [&] { return engine.Run(p->sha, p->keys, p->argv, host, c.reply); });
      });
}

awaitable<void> CmdEval(ConnCommand& c) { co_await Eval(c, false, false); }
awaitable<void> CmdEvalSha(ConnCommand& c) { co_await Eval(c, true, false); }
awaitable<void> CmdEvalRo(ConnCommand& c) { co_await Eval(c, false, true); }
awaitable<void> CmdEvalShaRo(ConnCommand& c) { co_await Eval(c, true, true); }

// The dispatcher has checked the subcommand and its arity against the table.
void CmdScript(ConnCommand& c) {
  std::string_view sub = c.args[1];
  ScriptCache& cache = c.server.scripts();
  if (EqualsIgnoreCase(sub, "LOAD")) {
    std::string body(c.args[2]);
    std::string sha = Sha1Hex(body);
    CompiledScript info;
    info.shebang = body.starts_with("#!");
    if (info.shebang) {
      if (auto error = ParseScriptShebang(body, &info.flags)) return c.reply.Error(*error);
    }
    if (auto error = c.server.lua().Compile(sha, info.shebang ? LibraryBody(body) : std::string_view(body), info))
      return c.reply.Error(*error);
    cache.Add(sha, std::move(body));
    return c.reply.Bulk(sha);
  }
  if (EqualsIgnoreCase(sub, "EXISTS")) {
    c.reply.ArrayHeader(c.args.size() - 2);
    for (size_t i = 2; i < c.args.size(); ++i) c.reply.Integer(cache.Contains(protocol::AsciiLower(c.args[i])) ? 1 : 0);
    return;
  }
  if (EqualsIgnoreCase(sub, "FLUSH")) {
    if (c.args.size() > 3 ||
        (c.args.size() == 3 && !EqualsIgnoreCase(c.args[2], "ASYNC") && !EqualsIgnoreCase(c.args[2], "SYNC")))
      return c.reply.Error(errors::kScriptFlushOption);
    cache.Flush();
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "KILL")) return ReplyKill(c, false);
  if (EqualsIgnoreCase(sub, "DEBUG")) {
    // NO is the only mode lapse has; the Lua debugger (YES, SYNC) is not built.
    if (EqualsIgnoreCase(c.args[2], "NO")) return c.reply.Ok();
    if (EqualsIgnoreCase(c.args[2], "YES") || EqualsIgnoreCase(c.args[2], "SYNC"))
      return c.reply.Error("ERR lapse has no Lua debugger: SCRIPT DEBUG supports only NO");
    return c.reply.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
  ReplyHelp(c.reply, {"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "DEBUG (YES|SYNC|NO)",
                      "    Set the debug mode for subsequent scripts executed.",
                      "EXISTS <sha1> [<sha1> ...]",
                      "    Return information about the existence of the scripts in the script cache.",
                      "FLUSH [ASYNC|SYNC]",
                      "    Flush the Lua scripts cache. Very dangerous on replicas.",
                      "    When called without the optional mode argument, the behavior is determined by the",
                      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                      "    * ASYNC: Asynchronously flush the scripts cache.",
                      "    * SYNC: Synchronously flush the scripts cache.",
                      "KILL",
                      "    Kill the currently executing Lua script.",
                      "LOAD <script>",
                      "    Load a script into the scripts cache without executing it."});
}

}  // namespace

void ReplyKill(ConnCommand& c, bool functions) {
  switch (c.server.running_scripts().Kill(functions)) {
    case RunningScripts::KillResult::kNotBusy:
      return c.reply.Error(errors::kNotBusy);
    case RunningScripts::KillResult::kUnkillable:
      return c.reply.Error(errors::kUnkillable);
    case RunningScripts::KillResult::kOtherKind:
      // The busy one is of the other kind: the BUSY reply names the command that kills it.
      return c.reply.Error(functions ? errors::kBusyScript : errors::kBusyFunction);
    case RunningScripts::KillResult::kKilled:
      return c.reply.Ok();
  }
}

awaitable<LuaEngine::Outcome> RunWatched(ConnCommand& c, LuaEngine& lua, bool is_function,
                                         const std::function<LuaEngine::Outcome()>& start) {
  RunningScripts& running = c.server.running_scripts();
  int thread = ShardSet::CurrentThreadIndex();
  RunningScripts::Slot& slot =
      running.Begin(thread >= 0 ? static_cast<size_t>(thread) : SIZE_MAX, is_function, c.server.clock().NowMs());
  lua.Watch(&running, &slot, c.server.busy_reply_threshold_ms(), is_function);
  // Only on its connection's own event loop can a busy script step aside for the others.
  lua.AllowSuspend(thread >= 0 && static_cast<size_t>(thread) == c.session.home);
  LuaEngine::Outcome outcome = start();
  while (outcome == LuaEngine::Outcome::kSuspended) {
    // Busy: the thread's other clients run (and get BUSY) while the script keeps its shards.
    // Keys its writes made ready wait for its end: blocked clients see all of it or none.
    ShardSet::AtomicStep* step = ShardSet::DetachStep();
    std::vector<engine::ReadyKey> ready = std::exchange(engine::ReadyKeys(), {});
    co_await asio::post(c.server.shards().context(c.session.home), use_awaitable);
    ready.insert(ready.end(), engine::ReadyKeys().begin(), engine::ReadyKeys().end());
    engine::ReadyKeys() = std::move(ready);
    ShardSet::AttachStep(step);
    outcome = lua.Resume(c.reply);
  }
  lua.AllowSuspend(false);
  lua.Watch(nullptr, nullptr, 0, false);
  running.End(slot);
  if (outcome == LuaEngine::Outcome::kDone) c.reply_errors = lua.TakeReplyErrors();
  co_return outcome;
}

awaitable<void> RunScriptStep(ConnCommand& c, Args keys, ScriptCache::Footprint known,
                              const std::function<void(ScriptCache::Footprint)>& remember,
                              const std::function<awaitable<LuaEngine::Outcome>()>& run) {
  using Footprint = ScriptCache::Footprint;
  using Kind = ShardSet::AtomicStep::Kind;
  int caller_db = c.session.db;
  if (ShardSet::InAtomicStep()) {
    co_await run();  // inside EXEC, which holds every shard
    c.session.db = caller_db;
    co_return;
  }
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> declared;
  for (std::string_view key : keys) declared.push_back(shards.ShardFor(key));
  // Only a client's script has a dispatcher to keep its undo log.
  bool hold_all = known != Footprint::kDeclaredKeys || c.dispatcher == nullptr;
  while (true) {
    std::vector<uint32_t> ids = declared;
    if (hold_all) {
      ids.resize(shards.size());
      for (uint32_t id = 0; id < ids.size(); ++id) ids[id] = id;
    }
    LuaEngine::Outcome outcome;
    {
      ShardSet::AtomicStep step(shards, std::move(ids), hold_all ? Kind::kFixed : Kind::kGrowable);
      // A growable step may have to start over after it has written: its undo log takes that
      // back first (server/script_undo.h).
      std::optional<ScriptUndo> undo;
      if (!hold_all) {
        undo.emplace(c.dispatcher->charge_sum());
        undo->NoteShards(shards, declared);
        step.set_undo(&*undo);
      }
      // Once a script has strayed it holds every shard for good: nothing left to learn.
      if (known != Footprint::kUndeclaredKeys) step.WatchDeclared(declared);
      outcome = co_await run();
      if (step.undo() != nullptr) {
        if (outcome == LuaEngine::Outcome::kRestart) {
          c.dispatcher->RollBackScriptUndo(*undo);
        } else {
          c.dispatcher->CommitScriptUndo(*undo);
        }
      }
      if (known != Footprint::kUndeclaredKeys) {
        Footprint seen = step.grew() ? Footprint::kUndeclaredKeys : Footprint::kDeclaredKeys;
        if (seen != known) remember(seen);
      }
    }
    c.session.db = caller_db;
    if (outcome == LuaEngine::Outcome::kDone) co_return;
    hold_all = true;
  }
}

void RegisterScriptCommands(CommandTable& table) {
  constexpr uint32_t kS = kNoScript | kSumsCharges;
  table.Add({"eval", -3, kS, 0, 0, 0, CmdEval, "scripting", "Execute a Lua script server side"});
  table.Add({"evalsha", -3, kS, 0, 0, 0, CmdEvalSha, "scripting", "Execute a Lua script server side"});
  table.Add({"eval_ro", -3, kS | kReadOnly, 0, 0, 0, CmdEvalRo, "scripting", "Execute a read-only Lua script server side"});
  table.Add({"evalsha_ro", -3, kS | kReadOnly, 0, 0, 0, CmdEvalShaRo, "scripting",
             "Execute a read-only Lua script server side"});
  table.Add({"script", -2, kNoScript, 0, 0, 0, CmdScript, "scripting", "A container for Lua scripts management commands"},
            {{"debug", 3}, {"exists", -3}, {"flush", -2}, {"help", 2}, {"kill", 2}, {"load", 3}});
}

}  // namespace lapse::server
