// File: server/script_commands.cc
//
// Scripting family: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, as in Redis 7.0
// (server/lua_engine.h has the Lua side).
//
// A script is atomic: it runs as one atomic step, so no other client sees any part of it
// before the rest, whatever keys it touches, declared in KEYS or not. It holds the shards of
// its KEYS, so that scripts on different shards run in parallel, and grows its step when it
// touches others (RunInOwnStep). Inside EXEC it runs in EXEC's step.
#include <optional>
#include <string>
#include <vector>

#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/command_table.h"
#include "server/dispatcher.h"
#include "server/help_reply.h"
#include "server/server.h"
#include "server/sha1.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

std::string LowerHex(std::string_view sha) {
  std::string out(sha);
  for (char& ch : out) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
  return out;
}

// redis.call, for the client that runs the script.
class ClientScriptHost : public ScriptHost {
 public:
  ClientScriptHost(Dispatcher& dispatcher, bool read_only) : dispatcher_(dispatcher), read_only_(read_only) {}
  Refusal Call(const std::vector<std::string_view>& args, protocol::RespVersion resp, std::string* out) override {
    return dispatcher_.RunForScript(args, read_only_, resp, out);
  }

 private:
  Dispatcher& dispatcher_;
  bool read_only_;
};

void RunInOwnStep(ConnCommand& c, const std::string& sha, Args keys, Args argv, ScriptHost& host);

void Eval(ConnCommand& c, bool by_sha, bool read_only) {
  int64_t numkeys = 0;
  if (!protocol::ParseInt64(c.args[2], &numkeys)) return c.reply.Error(errors::kNotInteger);
  if (numkeys > static_cast<int64_t>(c.args.size()) - 3) return c.reply.Error(errors::kTooManyKeys);
  if (numkeys < 0) return c.reply.Error(errors::kNegativeKeys);
  std::string sha, body;
  if (by_sha) {
    sha = LowerHex(c.args[1]);
    std::optional<std::string> found = c.server.scripts().Find(sha);
    if (!found) return c.reply.Error(errors::kNoScript);
    body = std::move(*found);
  } else {
    body = std::string(c.args[1]);
    sha = Sha1Hex(body);
  }
  LuaEngine& lua = c.server.lua();
  if (auto error = lua.Compile(sha, body)) return c.reply.Error(*error);
  if (!by_sha) c.server.scripts().Add(sha, std::move(body));

  ClientScriptHost host(*c.dispatcher, read_only);
  Args keys = c.args.subspan(3, static_cast<size_t>(numkeys));
  Args argv = c.args.subspan(3 + static_cast<size_t>(numkeys));
  // SELECT inside a script chooses the script's database, not its caller's (as in Redis).
  int caller_db = c.session.db;
  if (ShardSet::InAtomicStep()) {
    lua.Run(sha, keys, argv, host, c.reply);  // inside EXEC, which holds every shard
  } else {
    RunInOwnStep(c, sha, keys, argv, host);
  }
  c.session.db = caller_db;
}

// What a script holds depends on what it has been seen to touch. Its first run holds every
// shard, watching whether it keeps to its KEYS. A script that did holds only its KEYS' shards
// from then on, and takes others with try_lock if it strays (a growable step); when one is
// busy before it has written, it starts over holding every shard. A script that once
// strayed holds every shard from then on.
void RunInOwnStep(ConnCommand& c, const std::string& sha, Args keys, Args argv, ScriptHost& host) {
  using Footprint = ScriptCache::Footprint;
  using Kind = ShardSet::AtomicStep::Kind;
  ShardSet& shards = c.server.shards();
  ScriptCache& cache = c.server.scripts();
  std::vector<uint32_t> declared;
  for (std::string_view key : keys) declared.push_back(shards.ShardFor(key));
  bool hold_all = cache.FootprintOf(sha) != Footprint::kDeclaredKeys;
  int db = c.session.db;
  while (true) {
    std::vector<uint32_t> ids = declared;
    if (hold_all) {
      ids.resize(shards.size());
      for (uint32_t id = 0; id < ids.size(); ++id) ids[id] = id;
    }
    ShardSet::AtomicStep step(shards, std::move(ids), hold_all ? Kind::kFixed : Kind::kGrowable);
    step.WatchDeclared(declared);
    LuaEngine::Outcome outcome = c.server.lua().Run(sha, keys, argv, host, c.reply);
    cache.SetFootprint(sha, step.grew() ? Footprint::kUndeclaredKeys : Footprint::kDeclaredKeys);
    if (outcome == LuaEngine::Outcome::kDone) return;
    hold_all = true;
    c.session.db = db;
  }
}

void CmdEval(ConnCommand& c) { Eval(c, false, false); }
void CmdEvalSha(ConnCommand& c) { Eval(c, true, false); }
void CmdEvalRo(ConnCommand& c) { Eval(c, false, true); }
void CmdEvalShaRo(ConnCommand& c) { Eval(c, true, true); }

// The dispatcher has checked the subcommand and its arity against the table.
void CmdScript(ConnCommand& c) {
  std::string_view sub = c.args[1];
  ScriptCache& cache = c.server.scripts();
  if (EqualsIgnoreCase(sub, "LOAD")) {
    std::string body(c.args[2]);
    std::string sha = Sha1Hex(body);
    if (auto error = c.server.lua().Compile(sha, body)) return c.reply.Error(*error);
    cache.Add(sha, std::move(body));
    return c.reply.Bulk(sha);
  }
  if (EqualsIgnoreCase(sub, "EXISTS")) {
    c.reply.ArrayHeader(c.args.size() - 2);
    for (size_t i = 2; i < c.args.size(); ++i) c.reply.Integer(cache.Contains(LowerHex(c.args[i])) ? 1 : 0);
    return;
  }
  if (EqualsIgnoreCase(sub, "FLUSH")) {
    if (c.args.size() > 3 ||
        (c.args.size() == 3 && !EqualsIgnoreCase(c.args[2], "ASYNC") && !EqualsIgnoreCase(c.args[2], "SYNC")))
      return c.reply.Error(errors::kScriptFlushOption);
    cache.Flush();
    return c.reply.Ok();
  }
  if (EqualsIgnoreCase(sub, "KILL")) return c.reply.Error(errors::kNotBusy);
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
