// File: server/function_commands.cc
//
// Redis 7 functions: FUNCTION LOAD, DELETE, LIST, STATS, DUMP, RESTORE, FLUSH, KILL and HELP,
// and FCALL / FCALL_RO, as in Redis 7.0. Libraries live in the FunctionRegistry; each thread
// runs them in its own function Lua state (Server::function_lua), separate from EVAL's, with
// the library API while loading and the sandboxed globals while running. A function runs as
// a script does (server/script_step.h), its flags deciding what it may do: no-writes makes
// it read-only (and the only kind FCALL_RO runs), allow-oom lets it write over maxmemory.
//
// Libraries are listed sorted by name, and their functions too, where Redis lists them in
// its hash tables' order, which changes from run to run.
#include <optional>
#include <string>
#include <vector>

#include "engine/glob.h"
#include "engine/rdb_codec.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/aof.h"
#include "server/command_table.h"
#include "server/function_snapshot.h"
#include "server/function_registry.h"
#include "server/help_reply.h"
#include "server/script_step.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

bool ValidLibraryName(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok) return false;
  }
  return true;
}

std::variant<LibraryMetadata, std::string> ParseLibraryMetadata(std::string_view code) {
  if (code.substr(0, 2) != "#!") return std::string("ERR Missing library metadata");
  size_t newline = code.find('\n');
  if (newline == std::string_view::npos) return std::string("ERR Invalid library metadata");
  std::vector<std::string_view> parts = ShebangWords(code.substr(0, newline));
  LibraryMetadata md;
  md.engine = std::string(parts[0].substr(2));
  bool named = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].size() >= 5 && EqualsIgnoreCase(parts[i].substr(0, 5), "name=")) {
      if (named) return std::string("ERR Invalid metadata value, name argument was given multiple times");
      md.name = std::string(parts[i].substr(5));
      named = true;
      continue;
    }
    return "ERR Invalid metadata value given: " + std::string(parts[i]);
  }
  if (!named) return std::string("ERR Library name was not given");
  return md;
}

namespace {

constexpr std::string_view kLibraryNameRule =
    "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

// Checks `code` as FUNCTION LOAD does and loads it on this thread to learn its functions;
// the library, or Redis's error.
std::variant<FunctionLibrary, std::string> CheckLibrary(Server& server, std::string code) {
  auto parsed = ParseLibraryMetadata(code);
  if (auto* error = std::get_if<std::string>(&parsed)) return *error;
  LibraryMetadata& md = std::get<LibraryMetadata>(parsed);
  if (!EqualsIgnoreCase(md.engine, "LUA")) return "ERR Engine '" + md.engine + "' not found";
  if (!ValidLibraryName(md.name)) return std::string(kLibraryNameRule);
  FunctionLibrary library{md.name, std::move(code), {}};
  if (auto error = server.function_lua().LoadLibrary(LibraryBody(library.code), false, &library.functions))
    return *error;
  return library;
}

// Adds `library` to `next`, replacing a library of its name when `replace`; the error when
// one of its functions belongs to another library, or its name is taken.
std::optional<std::string> AddLibrary(FunctionRegistry::Snapshot& next, FunctionLibrary library, bool replace,
                                      std::string_view exists_error_format) {
  auto same = next.libraries.find(library.name);
  if (same != next.libraries.end()) {
    if (!replace) {
      std::string error(exists_error_format);
      return error.replace(error.find("%s"), 2, library.name);
    }
    next.libraries.erase(same);
  }
  for (const auto& [name, other] : next.libraries) {
    for (const FunctionInfo& f : other.functions) {
      for (const FunctionInfo& mine : library.functions) {
        if (mine.name == f.name) return "ERR Function " + f.name + " already exists";
      }
    }
  }
  std::string name = library.name;
  next.libraries.emplace(std::move(name), std::move(library));
  return std::nullopt;
}

// Publishes the change `edit` makes to the current libraries, retrying if another client's
// change came first; `edit` returns an error to give up.
template <typename Edit>
std::optional<std::string> ChangeLibraries(Server& server, Edit&& edit) {
  FunctionRegistry& registry = server.functions();
  while (true) {
    std::shared_ptr<const FunctionRegistry::Snapshot> current = registry.Current();
    FunctionRegistry::Snapshot next = *current;
    if (auto error = edit(next)) return error;
    if (registry.Publish(current, std::move(next))) return std::nullopt;
  }
}

void FunctionLoad(ConnCommand& c) {
  bool replace = false;
  for (size_t i = 2; i + 1 < c.args.size(); ++i) {
    if (!EqualsIgnoreCase(c.args[i], "REPLACE")) return c.reply.Error("ERR Unknown option given: " + std::string(c.args[i]));
    replace = true;
  }
  auto checked = CheckLibrary(c.server, std::string(c.args.back()));
  if (auto* error = std::get_if<std::string>(&checked)) return c.reply.Error(*error);
  FunctionLibrary& library = std::get<FunctionLibrary>(checked);
  std::string name = library.name;
  auto error = ChangeLibraries(c.server, [&](FunctionRegistry::Snapshot& next) {
    return AddLibrary(next, library, replace, "ERR Library '%s' already exists");
  });
  if (error) return c.reply.Error(*error);
  c.changes = 1;  // Redis counts each change to the libraries, FUNCTION FLUSH's too, as one
  c.reply.Bulk(name);
}

void FunctionDelete(ConnCommand& c) {
  std::string name(c.args[2]);
  auto error = ChangeLibraries(c.server, [&](FunctionRegistry::Snapshot& next) -> std::optional<std::string> {
    if (next.libraries.erase(name) == 0) return std::string("ERR Library not found");
    return std::nullopt;
  });
  if (error) return c.reply.Error(*error);
  c.changes = 1;
  c.reply.Ok();
}

void WriteFunction(protocol::ReplyWriter& r, const FunctionInfo& f) {
  r.MapHeader(3);
  r.Bulk("name");
  r.Bulk(f.name);
  r.Bulk("description");
  f.description ? r.Bulk(*f.description) : r.Null();
  r.Bulk("flags");
  size_t n = 0;
  for (size_t bit = 0; bit < std::size(kFunctionFlagNames); ++bit) n += (f.flags >> bit) & 1;
  r.SetHeader(n);
  for (size_t bit = 0; bit < std::size(kFunctionFlagNames); ++bit) {
    if ((f.flags >> bit) & 1) r.SimpleString(kFunctionFlagNames[bit]);
  }
}

void FunctionList(ConnCommand& c) {
  std::optional<std::string_view> pattern;
  bool with_code = false;
  for (size_t i = 2; i < c.args.size(); ++i) {
    if (!with_code && EqualsIgnoreCase(c.args[i], "WITHCODE")) {
      with_code = true;
    } else if (!pattern && EqualsIgnoreCase(c.args[i], "LIBRARYNAME")) {
      if (i + 1 >= c.args.size()) return c.reply.Error("ERR library name argument was not given");
      pattern = c.args[++i];
    } else {
      return c.reply.Error("ERR Unknown argument " + std::string(c.args[i]));
    }
  }
  std::shared_ptr<const FunctionRegistry::Snapshot> snapshot = c.server.functions().Current();
  std::vector<const FunctionLibrary*> shown;
  for (const auto& [name, library] : snapshot->libraries) {
    if (!pattern || engine::GlobMatch(*pattern, name, true)) shown.push_back(&library);
  }
  c.reply.ArrayHeader(shown.size());
  for (const FunctionLibrary* library : shown) {
    c.reply.MapHeader(with_code ? 4 : 3);
    c.reply.Bulk("library_name");
    c.reply.Bulk(library->name);
    c.reply.Bulk("engine");
    c.reply.Bulk("LUA");
    c.reply.Bulk("functions");
    c.reply.ArrayHeader(library->functions.size());
    for (const FunctionInfo& f : library->functions) WriteFunction(c.reply, f);
    if (with_code) {
      c.reply.Bulk("library_code");
      c.reply.Bulk(library->code);
    }
  }
}

void FunctionStats(ConnCommand& c) {
  std::shared_ptr<const FunctionRegistry::Snapshot> snapshot = c.server.functions().Current();
  c.reply.MapHeader(2);
  c.reply.Bulk("running_script");
  c.reply.Null();  // functions finish within their step: none is ever seen running
  c.reply.Bulk("engines");
  c.reply.MapHeader(1);
  c.reply.Bulk("LUA");
  c.reply.MapHeader(2);
  c.reply.Bulk("libraries_count");
  c.reply.Integer(static_cast<int64_t>(snapshot->libraries.size()));
  c.reply.Bulk("functions_count");
  c.reply.Integer(static_cast<int64_t>(snapshot->owners.size()));
}

// Redis's DUMP payload of every library: per library the FUNCTION2 opcode and its code, then
// the RDB version and CRC-64. lapse writes the code uncompressed, which Redis reads.
void FunctionDump(ConnCommand& c) {
  std::shared_ptr<const FunctionRegistry::Snapshot> snapshot = c.server.functions().Current();
  std::string body;
  for (const auto& [name, library] : snapshot->libraries) {
    body.push_back(static_cast<char>(engine::rdb::kOpcodeFunction2));
    engine::rdb::AppendString(body, library.code);
  }
  c.reply.Bulk(engine::rdb::SealPayload(std::move(body)));
}

void FunctionRestore(ConnCommand& c) {
  enum class Policy { kAppend, kReplace, kFlush } policy = Policy::kAppend;
  if (c.args.size() > 4) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "FUNCTION"));
  if (c.args.size() == 4) {
    if (EqualsIgnoreCase(c.args[3], "APPEND")) {
      policy = Policy::kAppend;
    } else if (EqualsIgnoreCase(c.args[3], "REPLACE")) {
      policy = Policy::kReplace;
    } else if (EqualsIgnoreCase(c.args[3], "FLUSH")) {
      policy = Policy::kFlush;
    } else {
      return c.reply.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
    }
  }
  std::optional<std::string_view> body = engine::rdb::OpenPayload(c.args[2]);
  if (!body) return c.reply.Error("ERR DUMP payload version or checksum are wrong");
  std::vector<FunctionLibrary> restored;
  engine::rdb::Reader reader(*body);
  while (!reader.AtEnd()) {
    std::optional<uint8_t> opcode = reader.Byte();
    if (opcode == engine::rdb::kOpcodeFunctionPreGa) return c.reply.Error("ERR Pre-GA function format not supported");
    if (opcode != engine::rdb::kOpcodeFunction2) return c.reply.Error("ERR given type is not a function");
    std::optional<std::string> code = reader.String();
    if (!code) return c.reply.Error("ERR Failed loading library");
    auto checked = CheckLibrary(c.server, std::move(*code));
    if (auto* error = std::get_if<std::string>(&checked)) return c.reply.Error(*error);
    restored.push_back(std::move(std::get<FunctionLibrary>(checked)));
  }
  auto error = ChangeLibraries(c.server, [&](FunctionRegistry::Snapshot& next) -> std::optional<std::string> {
    if (policy == Policy::kFlush) next.libraries.clear();
    for (const FunctionLibrary& library : restored) {
      if (auto e = AddLibrary(next, library, policy == Policy::kReplace, "ERR Library %s already exists")) return e;
    }
    return std::nullopt;
  });
  if (error) return c.reply.Error(*error);
  c.changes = 1;
  c.reply.Ok();
}

void FunctionFlush(ConnCommand& c) {
  if (c.args.size() > 3) return c.reply.Error(errors::UnknownSubcommandOrArity(c.args[1], "FUNCTION"));
  if (c.args.size() == 3 && !EqualsIgnoreCase(c.args[2], "ASYNC") && !EqualsIgnoreCase(c.args[2], "SYNC")) {
    return c.reply.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  }
  ChangeLibraries(c.server, [](FunctionRegistry::Snapshot& next) -> std::optional<std::string> {
    next.libraries.clear();
    return std::nullopt;
  });
  c.changes = 1;
  c.reply.Ok();
}

// The dispatcher has checked the subcommand and its arity against the table.
void RunFunctionSubcommand(ConnCommand& c) {
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "LOAD")) return FunctionLoad(c);
  if (EqualsIgnoreCase(sub, "DELETE")) return FunctionDelete(c);
  if (EqualsIgnoreCase(sub, "LIST")) return FunctionList(c);
  if (EqualsIgnoreCase(sub, "STATS")) return FunctionStats(c);
  if (EqualsIgnoreCase(sub, "DUMP")) return FunctionDump(c);
  if (EqualsIgnoreCase(sub, "RESTORE")) return FunctionRestore(c);
  if (EqualsIgnoreCase(sub, "FLUSH")) return FunctionFlush(c);
  if (EqualsIgnoreCase(sub, "KILL")) return ReplyKill(c, true);
  ReplyHelp(c.reply,
            {"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
             "LOAD [REPLACE] <FUNCTION CODE>",
             "    Create a new library with the given library name and code.",
             "DELETE <LIBRARY NAME>",
             "    Delete the given library.",
             "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
             "    Return general information on all the libraries:",
             "    * Library name",
             "    * The engine used to run the Library",
             "    * Library description",
             "    * Functions list",
             "    * Library code (if WITHCODE is given)",
             "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
             "STATS",
             "    Return information about the current function running:",
             "    * Function name",
             "    * Command used to run the function",
             "    * Duration in MS that the function is running",
             "    If no function is running, return nil",
             "    In addition, returns a list of available engines.",
             "KILL",
             "    Kill the current running function.",
             "FLUSH [ASYNC|SYNC]",
             "    Delete all the libraries.",
             "    When called without the optional mode argument, the behavior is determined by the",
             "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
             "    * ASYNC: Asynchronously flush the libraries.",
             "    * SYNC: Synchronously flush the libraries.",
             "DUMP",
             "    Return a serialized payload representing the current libraries, can be restored using FUNCTION "
             "RESTORE command",
             "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
             "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
             "    control how to handle existing libraries (default APPEND):",
             "    * FLUSH: delete all existing libraries.",
             "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
             "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
             "      libraries with the new libraries (notice that even on this option there is a chance of failure",
             "      in case of functions name collision with another library)."});
}

void CmdFunction(ConnCommand& c) {
  RunFunctionSubcommand(c);
  // LOAD, DELETE, RESTORE and FLUSH changed the libraries (one change each, as Redis counts
  // them): the log replays the command as it came, as Redis propagates it.
  if (c.changes.value_or(0) > 0 && c.server.aof().capturing()) {
    c.server.aof().Log(c.session.db, {LoggedCommand(c.args.begin(), c.args.end())});
  }
}

// The function FCALL runs and its flags, once its arguments have passed; or nothing, after
// replying with the error.
std::optional<uint32_t> CheckFcall(ConnCommand& c, bool read_only_command, int64_t* numkeys) {
  std::shared_ptr<const FunctionRegistry::Snapshot> snapshot = c.server.functions().Current();
  const FunctionInfo* function = snapshot->Find(std::string(c.args[1]));
  std::string_view error;
  if (function == nullptr) {
    error = "ERR Function not found";
  } else if (!protocol::ParseInt64(c.args[2], numkeys)) {
    error = "ERR Bad number of keys provided";
  } else if (*numkeys > static_cast<int64_t>(c.args.size()) - 3) {
    error = errors::kTooManyKeys;
  } else if (*numkeys < 0) {
    error = errors::kNegativeKeys;
  } else if (!(function->flags & (kFunctionNoWrites | kFunctionAllowOom)) && c.server.OverMaxmemory()) {
    error = "OOM command not allowed when used memory > 'maxmemory'.";
  } else if (read_only_command && !(function->flags & kFunctionNoWrites)) {
    error = "ERR Can not execute a script with write flag using *_ro command.";
  }
  if (!error.empty()) {
    c.reply.Error(error);
    return std::nullopt;
  }
  return function->flags;
}

awaitable<void> Fcall(ConnCommand& c, bool read_only_command) {
  int64_t numkeys = 0;
  std::optional<uint32_t> flags = CheckFcall(c, read_only_command, &numkeys);
  if (!flags) co_return;
  std::string name(c.args[1]);
  ClientScriptHost host(*c.dispatcher, *flags & kFunctionNoWrites, *flags & kFunctionAllowOom);
  Args keys = c.args.subspan(3, static_cast<size_t>(numkeys));
  Args args = c.args.subspan(3 + static_cast<size_t>(numkeys));
  FunctionRegistry& registry = c.server.functions();
  co_await RunScriptStep(
      c, keys, registry.FootprintOf(name), [&](ScriptCache::Footprint seen) { registry.SetFootprint(name, seen); },
      [&]() -> awaitable<LuaEngine::Outcome> {
        LuaEngine& engine = c.server.function_lua();
        co_return co_await RunWatched(c, engine, true,
                                      [&] { return engine.RunFunction(name, keys, args, host, c.reply); });
      });
}

awaitable<void> CmdFcall(ConnCommand& c) { co_await Fcall(c, false); }
awaitable<void> CmdFcallRo(ConnCommand& c) { co_await Fcall(c, true); }

}  // namespace

void RegisterFunctionCommands(CommandTable& table) {
  constexpr uint32_t kS = kNoScript | kSumsCharges;
  table.Add({"fcall", -3, kS, 0, 0, 0, CmdFcall, "scripting", "Invoke a function"});
  table.Add({"fcall_ro", -3, kS | kReadOnly, 0, 0, 0, CmdFcallRo, "scripting", "Invoke a read-only function"});
  table.Add({"function", -2, kNoScript, 0, 0, 0, CmdFunction, "scripting", "A container for function commands"},
            {{"delete", 3}, {"dump", 2}, {"flush", -2}, {"help", 2}, {"kill", 2}, {"list", -2}, {"load", -3},
             {"restore", -3}, {"stats", 2}});
}

std::vector<std::string> LibraryCodes(Server& server) {
  std::vector<std::string> codes;
  for (const auto& [name, library] : server.functions().Current()->libraries) codes.push_back(library.code);
  return codes;
}

std::optional<std::string> LoadLibraryCodes(Server& server, std::vector<std::string> codes) {
  std::vector<FunctionLibrary> loaded;
  for (std::string& code : codes) {
    auto checked = CheckLibrary(server, std::move(code));
    if (auto* error = std::get_if<std::string>(&checked)) return *error;
    loaded.push_back(std::move(std::get<FunctionLibrary>(checked)));
  }
  return ChangeLibraries(server, [&](FunctionRegistry::Snapshot& next) -> std::optional<std::string> {
    for (const FunctionLibrary& library : loaded) {
      if (auto e = AddLibrary(next, library, true, "ERR Library %s already exists")) return e;
    }
    return std::nullopt;
  });
}

}  // namespace lapse::server
