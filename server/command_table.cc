#include "server/command_table.h"

#include <algorithm>

namespace lapse::server {

namespace {
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return out;
}
}  // namespace

void CommandTable::Add(CommandSpec spec) {
  spec.name = Lower(spec.name);
  std::string key = spec.name;
  auto [it, inserted] = by_name_.emplace(key, std::move(spec));
  if (inserted) ordered_.push_back(&it->second);
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  // Any length: rename-command may give a command a name longer than the built-in ones.
  auto it = by_name_.find(Lower(name));
  return it == by_name_.end() ? nullptr : &it->second;
}

bool CommandTable::Rename(std::string_view old_name, std::string_view new_name) {
  auto it = by_name_.find(Lower(old_name));
  if (it == by_name_.end()) return false;
  CommandSpec spec = std::move(it->second);
  ordered_.erase(std::remove(ordered_.begin(), ordered_.end(), &it->second), ordered_.end());
  by_name_.erase(it);
  if (!new_name.empty()) {
    spec.name = Lower(new_name);
    Add(std::move(spec));
  }
  return true;
}

CommandTable BuildCommandTable() {
  CommandTable table;
  RegisterConnectionCommands(table);
  RegisterServerCommands(table);
  RegisterStringCommands(table);
  RegisterKeyCommands(table);
  RegisterContainerCommands(table);
  return table;
}

}  // namespace lapse::server
