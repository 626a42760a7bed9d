#include "server/command_table.h"

#include <algorithm>

#include "protocol/arg_reader.h"

namespace lapse::server {


const SubcommandSpec* CommandSpec::FindSubcommand(std::string_view sub) const {
  for (const SubcommandSpec& s : subcommands) {
    if (protocol::EqualsIgnoreCase(sub, s.Short())) return &s;
  }
  return nullptr;
}

void CommandTable::Add(CommandSpec spec, std::vector<SubcommandSpec> subcommands) {
  spec.name = protocol::AsciiLower(spec.name);
  for (SubcommandSpec& sub : subcommands) {
    spec.subcommands.push_back({spec.name + "|" + protocol::AsciiLower(sub.name), sub.arity});
  }
  std::string key = spec.name;
  auto [it, inserted] = by_name_.emplace(key, std::move(spec));
  if (!inserted) return;
  ordered_.push_back(&it->second);
  CommandSpec& added = it->second;
  added.stat_id = static_cast<uint32_t>(stat_names_.size());
  stat_names_.push_back(&added.name);
  for (SubcommandSpec& sub : added.subcommands) {
    sub.stat_id = static_cast<uint32_t>(stat_names_.size());
    stat_names_.push_back(&sub.name);
  }
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  // Any length: rename-command may give a command a name longer than the built-in ones.
  auto it = by_name_.find(protocol::AsciiLower(name));
  return it == by_name_.end() ? nullptr : &it->second;
}

std::optional<std::string> CommandTable::Rename(std::string_view old_name, std::string_view new_name) {
  auto it = by_name_.find(protocol::AsciiLower(old_name));
  if (it == by_name_.end()) return "No such command in rename-command";
  std::string key = protocol::AsciiLower(new_name);
  if (!key.empty() && by_name_.count(key) != 0) return "Target command name already exists";
  // by_name_'s nodes stay put, so ordered_ keeps its place in COMMAND's listing for the new key.
  auto node = by_name_.extract(it);
  auto pos = std::find(ordered_.begin(), ordered_.end(), &node.mapped());
  if (key.empty()) {
    ordered_.erase(pos);
    return std::nullopt;
  }
  node.key() = key;
  by_name_.insert(std::move(node));
  return std::nullopt;
}

CommandTable BuildCommandTable() {
  CommandTable table;
  RegisterConnectionCommands(table);
  RegisterCommandCommand(table);
  RegisterServerCommands(table);
  RegisterInfoCommand(table);
  RegisterDebugCommand(table);
  RegisterStringCommands(table);
  RegisterHashCommands(table);
  RegisterSetCommands(table);
  RegisterBitCommands(table);
  RegisterKeyCommands(table);
  RegisterKeyspaceCommands(table);
  RegisterDumpCommands(table);
  RegisterPersistenceCommands(table);
  RegisterContainerCommands(table);
  RegisterChangeFeedCommands(table);
  RegisterTransactionCommands(table);
  RegisterScriptCommands(table);
  RegisterFunctionCommands(table);
  RegisterMemoryCommands(table);
  RegisterHllCommands(table);
  RegisterListCommands(table);
  RegisterZSetCommands(table);
  RegisterZSetBlockingCommands(table);
  RegisterSortCommands(table);
  RegisterPubSubCommands(table);
  RegisterGeoCommands(table);
  RegisterOperationsCommands(table);
  RegisterStreamCommands(table);
  RegisterAclCommands(table);
  RegisterAofCommands(table);
  RegisterStandaloneCommands(table);
  return table;
}

}  // namespace lapse::server
