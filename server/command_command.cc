// COMMAND and its subcommands: what a client learns about the commands lapse has (COUNT, LIST,
// INFO, DOCS, GETKEYS, GETKEYSANDFLAGS).
//
// The command table says which commands and subcommands exist; server/command_metadata.h says
// what COMMAND INFO and DOCS tell about each: Redis 7.0.15's own replies for the commands Redis
// has, so that clients and redis-cli see the same bytes, and hand-written ones for lapse's.
// A container lists only the subcommands lapse has. Key finding for GETKEYS follows the key
// specs as Redis 7.0 does; dispatch never reads any of this.
#include <string>
#include <vector>

#include "engine/glob.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/acl.h"
#include "server/command_metadata.h"
#include "server/command_table.h"
#include "server/help_reply.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;
using protocol::EqualsIgnoreCase;

namespace {

// A command or one of its subcommands, as COMMAND INFO, DOCS and GETKEYS name them.
struct CommandRef {
  const CommandSpec* spec = nullptr;
  const SubcommandSpec* sub = nullptr;  // null for the command itself
  const std::string& Name() const { return sub != nullptr ? sub->name : spec->name; }
  int Arity() const { return sub != nullptr ? sub->arity : spec->arity; }
};

// The commands COMMAND knows, in the table's order.
std::vector<const CommandSpec*> Listed(const CommandTable& table) {
  std::vector<const CommandSpec*> listed;
  for (const CommandSpec* spec : table.All()) {
    if (!(spec->flags & kNotListed)) listed.push_back(spec);
  }
  return listed;
}

// A command COMMAND knows by that name; nullptr when none.
const CommandSpec* FindListed(const CommandTable& table, std::string_view name) {
  const CommandSpec* spec = table.Find(name);
  return spec != nullptr && !(spec->flags & kNotListed) ? spec : nullptr;
}

// "get" or "client|list"; nullopt when lapse has no such command or subcommand.
std::optional<CommandRef> FindByFullName(const CommandTable& table, std::string_view name) {
  size_t bar = name.find('|');
  const CommandSpec* spec = FindListed(table, name.substr(0, bar));
  if (spec == nullptr) return std::nullopt;
  if (bar == std::string_view::npos) return CommandRef{spec};
  const SubcommandSpec* sub = spec->FindSubcommand(name.substr(bar + 1));
  if (sub == nullptr) return std::nullopt;
  return CommandRef{spec, sub};
}

// ---- COMMAND INFO ----

// lapse's own commands take COMMAND INFO's flags from the table.
void WriteTableFlags(protocol::ReplyWriter& r, const CommandSpec& spec) {
  std::vector<const char*> flags;
  if (spec.flags & kWrite) flags.push_back("write");
  if (spec.flags & kDenyOom) flags.push_back("denyoom");
  if (spec.flags & kReadOnly) flags.push_back("readonly");
  if (spec.flags & kAdmin) flags.push_back("admin");
  if (spec.flags & kPubSub) flags.push_back("pubsub");
  if (spec.flags & kBlocking) flags.push_back("blocking");
  if (spec.flags & kFast) flags.push_back("fast");
  if (spec.flags & kNoAuth) flags.push_back("no_auth");
  // Redis adds it after the declared flags, for a command whose keys it must search for.
  if (spec.find_keys != nullptr) flags.push_back("movablekeys");
  r.SetHeader(flags.size());
  for (const char* f : flags) r.SimpleString(f);
}

uint32_t CategoriesOf(const CommandRef& ref) {
  return ref.sub != nullptr ? SubcommandCategories(*ref.spec, *ref.sub) : CommandCategories(*ref.spec);
}

// Listed in the order of Redis's category table, as COMMAND INFO lists them (server/acl.h).
void WriteCategories(protocol::ReplyWriter& r, uint32_t bits) {
  std::vector<std::string> names;
  for (const AclCategoryName& category : AclCategoryNames()) {
    if (bits & category.bit) names.push_back(std::string("@") + category.name);
  }
  r.SetHeader(names.size());
  for (const std::string& name : names) r.SimpleString(name);
}

struct KeyRange {
  int64_t first = 0, last = 0, step = 0;
};

// COMMAND INFO's first, last and step key. The table's key positions are for routing, and a
// container command routes by its container without one; clients read these as Redis derives
// them from the key specs, so a single "index, range" spec gives them.
KeyRange LegacyKeyRange(const CommandSpec& spec, const CommandMetadata* meta) {
  const std::vector<KeySpec>& specs = KeySpecsOf(meta);
  if (specs.size() == 1 && specs[0].begin_type == "index" && specs[0].find_type == "range" && specs[0].lastkey >= 0) {
    return {specs[0].index, specs[0].index + specs[0].lastkey, specs[0].keystep};
  }
  return {spec.first_key, spec.last_key, spec.key_step};
}

// COMMAND INFO's first seven fields from the table, for a command Redis does not have. Like
// Redis's, a container has no flags and no keys of its own.
void WriteTableInfoHead(protocol::ReplyWriter& r, const CommandRef& ref, const CommandMetadata* meta) {
  bool container = ref.sub == nullptr && !ref.spec->subcommands.empty();
  r.Bulk(ref.Name());
  r.Integer(ref.Arity());
  if (container || ref.sub != nullptr) {
    r.SetHeader(0);
  } else {
    WriteTableFlags(r, *ref.spec);
  }
  KeyRange keys = !container && ref.sub == nullptr ? LegacyKeyRange(*ref.spec, meta) : KeyRange{};
  r.Integer(keys.first);
  r.Integer(keys.last);
  r.Integer(keys.step);
  WriteCategories(r, CategoriesOf(ref));
}

void WriteInfo(protocol::ReplyWriter& r, const CommandRef& ref) {
  const CommandMetadata* meta = FindCommandMetadata(ref.Name());
  r.ArrayHeader(10);
  if (meta != nullptr && !meta->info_head.empty()) {
    WriteMetadataTokens(r, meta->info_head);
  } else {
    WriteTableInfoHead(r, ref, meta);
  }
  if (meta != nullptr) {
    WriteMetadataTokens(r, meta->info_tail);
  } else {
    r.SetHeader(0);  // tips
    r.SetHeader(0);  // key specs
  }
  // Redis 7.0 answers a set when there is no subcommand, else an array.
  size_t subs = ref.sub == nullptr ? ref.spec->subcommands.size() : 0;
  subs == 0 ? r.SetHeader(0) : r.ArrayHeader(subs);
  for (size_t i = 0; i < subs; ++i) WriteInfo(r, {ref.spec, &ref.spec->subcommands[i]});
}

// ---- COMMAND DOCS ----

void WriteDocs(protocol::ReplyWriter& r, const CommandRef& ref) {
  const CommandMetadata* meta = FindCommandMetadata(ref.Name());
  size_t subs = ref.sub == nullptr ? ref.spec->subcommands.size() : 0;
  if (meta != nullptr) {
    r.MapHeader(DocsFieldCount(meta->docs) + (subs > 0 ? 1 : 0));
    size_t header_end = meta->docs.find('^');
    if (header_end != std::string_view::npos) WriteMetadataTokens(r, meta->docs.substr(header_end + 1));
  } else {  // unreachable while every command has metadata (command_metadata_test)
    r.MapHeader(2 + (subs > 0 ? 1 : 0));
    r.Bulk("summary");
    r.Bulk(ref.spec->summary);
    r.Bulk("group");
    r.Bulk(ref.spec->group);
  }
  if (subs == 0) return;
  r.Bulk("subcommands");
  r.MapHeader(subs);
  for (const SubcommandSpec& sub : ref.spec->subcommands) {
    r.Bulk(sub.name);
    WriteDocs(r, {ref.spec, &sub});
  }
}

// ---- COMMAND LIST ----

// Every command, each followed by its subcommands, as Redis lists them.
std::vector<CommandRef> AllCommandsAndSubcommands(const CommandTable& table) {
  std::vector<CommandRef> all;
  for (const CommandSpec* spec : Listed(table)) {
    all.push_back({spec});
    for (const SubcommandSpec& sub : spec->subcommands) all.push_back({spec, &sub});
  }
  return all;
}

// COMMAND LIST FILTERBY kind value; nullopt for an unknown kind (a syntax error).
std::optional<std::vector<CommandRef>> Filtered(const std::vector<CommandRef>& all, std::string_view kind,
                                                std::string_view value) {
  std::vector<CommandRef> listed;
  if (EqualsIgnoreCase(kind, "MODULE")) return listed;  // lapse loads no modules
  if (EqualsIgnoreCase(kind, "ACLCAT")) {
    uint32_t category = FindAclCategory(value);  // 0 for an unknown one: nothing listed
    for (const CommandRef& ref : all) {
      if (CategoriesOf(ref) & category) listed.push_back(ref);
    }
    return listed;
  }
  if (EqualsIgnoreCase(kind, "PATTERN")) {
    for (const CommandRef& ref : all) {
      if (engine::GlobMatch(value, ref.Name(), true)) listed.push_back(ref);
    }
    return listed;
  }
  return std::nullopt;
}

void CommandList(ConnCommand& c) {
  std::vector<CommandRef> all = AllCommandsAndSubcommands(c.server.commands());
  std::optional<std::vector<CommandRef>> listed;
  if (c.args.size() == 2) {
    listed = std::move(all);
  } else if (c.args.size() == 5 && EqualsIgnoreCase(c.args[2], "FILTERBY")) {
    listed = Filtered(all, c.args[3], c.args[4]);
  }
  if (!listed) return c.reply.Error(errors::kSyntax);
  c.reply.ArrayHeader(listed->size());
  for (const CommandRef& ref : *listed) c.reply.Bulk(ref.Name());
}

// ---- COMMAND GETKEYS, GETKEYSANDFLAGS ----

// Redis's lookupCommand for the command given to GETKEYS: a container's subcommand when one
// follows it.
std::optional<CommandRef> FindGivenCommand(const CommandTable& table, Args cmd) {
  const CommandSpec* spec = FindListed(table, cmd[0]);
  if (spec == nullptr) return std::nullopt;
  if (cmd.size() == 1 || spec->subcommands.empty()) return CommandRef{spec};
  const SubcommandSpec* sub = spec->FindSubcommand(cmd[1]);
  if (sub == nullptr) return std::nullopt;
  return CommandRef{spec, sub};
}

bool HasNoMandatoryKeys(const CommandMetadata* meta) {
  return meta != nullptr && meta->info_head.find("^+no_mandatory_keys") != std::string_view::npos;
}

void CommandGetKeys(ConnCommand& c, bool with_flags) {
  Args cmd = c.args.subspan(2);
  std::optional<CommandRef> ref = FindGivenCommand(c.server.commands(), cmd);
  if (!ref) return c.reply.Error(errors::kInvalidCommandSpecified);
  const CommandMetadata* meta = FindCommandMetadata(ref->Name());
  const std::vector<KeySpec>& specs = KeySpecsOf(meta);
  if (!CommandMayHaveKeys(ref->Name(), specs)) return c.reply.Error(errors::kCommandHasNoKeys);
  if (!ArityOk(ref->Arity(), cmd.size())) return c.reply.Error(errors::kInvalidCommandArity);
  std::vector<FoundKey> keys = FindKeys(ref->Name(), specs, cmd);
  if (keys.empty() && !HasNoMandatoryKeys(meta)) return c.reply.Error(errors::kInvalidCommandArguments);
  c.reply.ArrayHeader(keys.size());
  for (const FoundKey& key : keys) {
    if (!with_flags) {
      c.reply.Bulk(cmd[key.index]);
      continue;
    }
    c.reply.ArrayHeader(2);
    c.reply.Bulk(cmd[key.index]);
    c.reply.SetHeader(key.flags.size());
    for (std::string_view flag : key.flags) c.reply.SimpleString(flag);
  }
}

// Redis 7.0's text, word for word.
void CommandHelp(ConnCommand& c) {
  ReplyHelp(c.reply, {"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                      "(no subcommand)",
                      "    Return details about all Redis commands.",
                      "COUNT",
                      "    Return the total number of commands in this Redis server.",
                      "LIST",
                      "    Return a list of all commands in this Redis server.",
                      "INFO [<command-name> ...]",
                      "    Return details about multiple Redis commands.",
                      "    If no command names are given, documentation details for all",
                      "    commands are returned.",
                      "DOCS [<command-name> ...]",
                      "    Return documentation details about multiple Redis commands.",
                      "    If no command names are given, documentation details for all",
                      "    commands are returned.",
                      "GETKEYS <full-command>",
                      "    Return the keys from a full Redis command.",
                      "GETKEYSANDFLAGS <full-command>",
                      "    Return the keys and the access flags from a full Redis command."});
}

void CommandInfo(ConnCommand& c) {
  const CommandTable& table = c.server.commands();
  if (c.args.size() <= 2) {
    std::vector<const CommandSpec*> listed = Listed(table);
    c.reply.ArrayHeader(listed.size());
    for (const CommandSpec* spec : listed) WriteInfo(c.reply, {spec});
    return;
  }
  c.reply.ArrayHeader(c.args.size() - 2);
  for (size_t i = 2; i < c.args.size(); ++i) {
    std::optional<CommandRef> ref = FindByFullName(table, c.args[i]);
    ref ? WriteInfo(c.reply, *ref) : c.reply.Null();
  }
}

void CommandDocs(ConnCommand& c) {
  const CommandTable& table = c.server.commands();
  std::vector<CommandRef> refs;
  if (c.args.size() == 2) {
    for (const CommandSpec* spec : Listed(table)) refs.push_back({spec});
  } else {
    for (size_t i = 2; i < c.args.size(); ++i) {
      if (std::optional<CommandRef> ref = FindByFullName(table, c.args[i])) refs.push_back(*ref);
    }
  }
  c.reply.MapHeader(refs.size());
  for (const CommandRef& ref : refs) {
    c.reply.Bulk(ref.Name());
    WriteDocs(c.reply, ref);
  }
}

// The dispatcher has checked the subcommand and its arity against the table.
void CmdCommand(ConnCommand& c) {
  if (c.args.size() == 1) return CommandInfo(c);
  std::string_view sub = c.args[1];
  if (EqualsIgnoreCase(sub, "COUNT")) return c.reply.Integer(static_cast<int64_t>(Listed(c.server.commands()).size()));
  if (EqualsIgnoreCase(sub, "HELP")) return CommandHelp(c);
  if (EqualsIgnoreCase(sub, "INFO")) return CommandInfo(c);
  if (EqualsIgnoreCase(sub, "DOCS")) return CommandDocs(c);
  if (EqualsIgnoreCase(sub, "LIST")) return CommandList(c);
  CommandGetKeys(c, EqualsIgnoreCase(sub, "GETKEYSANDFLAGS"));
}

}  // namespace

void RegisterCommandCommand(CommandTable& table) {
  table.Add({"command", -1, kConnection, 0, 0, 0, CmdCommand, "server", "Get array of Redis command details"},
            {{"count", 2},
             {"docs", -2},
             {"getkeys", -4},
             {"getkeysandflags", -4},
             {"help", 2},
             {"info", -2},
             {"list", -2}});
}

}  // namespace lapse::server
