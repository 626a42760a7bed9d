// File: server/script_step.h
//
// What EVAL and FCALL share: the client's redis.call (ClientScriptHost) and the atomic step a
// script or function runs in (RunScriptStep).
//
// A script is atomic: it runs as one atomic step, so no other client sees any part of it
// before the rest, whatever keys it touches, declared in KEYS or not. What it holds depends
// on what it has been seen to touch. Its first run holds every shard, watching whether it
// keeps to its declared keys. One that did holds only their shards from then on, so that
// scripts on different shards run in parallel, and takes others with try_lock if it strays
// (a growable step); when one is busy it starts over holding every shard, after its undo log
// (server/script_undo.h) has taken back what it wrote, unseen by anyone. One that once
// strayed holds every shard from then on. Inside EXEC it runs in EXEC's step, which holds
// every shard.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "server/asio.h"
#include "server/command_table.h"
#include "server/dispatcher.h"
#include "server/lua_engine.h"
#include "server/script_cache.h"

namespace lapse::server {

// redis.call, for the client that runs the script.
class ClientScriptHost : public ScriptHost {
 public:
  // `read_only`: writes refused (EVAL_RO, no-writes functions); `allow_oom`: writes allowed
  // over maxmemory (allow-oom functions).
  ClientScriptHost(Dispatcher& dispatcher, bool read_only, bool allow_oom)
      : dispatcher_(dispatcher), read_only_(read_only), allow_oom_(allow_oom) {}
  Refusal Call(const std::vector<std::string_view>& args, protocol::RespVersion resp, bool logged,
               std::string* out) override {
    return dispatcher_.RunForScript(args, read_only_, allow_oom_, resp, logged, out);
  }
  std::optional<bool> AclAllows(const std::vector<std::string_view>& args) override {
    return dispatcher_.AclAllowsForScript(args);
  }

 private:
  Dispatcher& dispatcher_;
  bool read_only_;
  bool allow_oom_;
};

// SCRIPT KILL (functions false) or FUNCTION KILL (true), with Redis's replies.
void ReplyKill(ConnCommand& c, bool functions);

// Runs `start` (LuaEngine::Run or RunFunction) on `lua`, watched for running too long
// (server/running_scripts.h): a busy script suspends now and then so that its thread serves
// its other clients, and is resumed here.
awaitable<LuaEngine::Outcome> RunWatched(ConnCommand& c, LuaEngine& lua, bool is_function,
                                         const std::function<LuaEngine::Outcome()>& start);

// Runs `run` as the script of `c` whose declared keys are `keys`, in the step described
// above; `known` is what it has been seen to touch, and `remember` records what this run
// touched. SELECT inside leaves the caller's database alone.
awaitable<void> RunScriptStep(ConnCommand& c, Args keys, ScriptCache::Footprint known,
                              const std::function<void(ScriptCache::Footprint)>& remember,
                              const std::function<awaitable<LuaEngine::Outcome>()>& run);

}  // namespace lapse::server
