// The command table on its own: lookup, arity, rename-command, and the invariants every
// entry of BuildCommandTable() must keep (dispatch, COMMAND INFO and COMMAND GETKEYS rely on
// them without checking).
#include "server/command_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::server {
namespace {

void NoOp(ConnCommand&) {}

CommandSpec Spec(std::string name, int arity) {
  return CommandSpec{std::move(name), arity, 0, 0, 0, 0, ConnHandler{NoOp}, "test", "A test command."};
}

TEST(CommandTableTest, FindIsCaseInsensitive) {
  CommandTable table = BuildCommandTable();
  const CommandSpec* get = table.Find("get");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->name, "get");
  EXPECT_EQ(table.Find("GET"), get);
  EXPECT_EQ(table.Find("gEt"), get);
  EXPECT_EQ(table.Find("incrbyfloat"), table.Find("INCRBYFLOAT"));
  EXPECT_EQ(table.Find("nosuchcommand"), nullptr);
  EXPECT_EQ(table.Find(""), nullptr);
  EXPECT_EQ(table.Find("get "), nullptr);
  EXPECT_EQ(table.Find("ge"), nullptr);
}

TEST(CommandTableTest, AddStoresTheNameLowerCased) {
  CommandTable table;
  table.Add(Spec("MixedCase", 1));
  ASSERT_EQ(table.All().size(), 1u);
  EXPECT_EQ(table.All()[0]->name, "mixedcase");
  EXPECT_EQ(table.Find("MIXEDCASE"), table.All()[0]);
}

// Redis's convention: a positive arity is the exact argument count (the name included), a
// negative one the least count.
TEST(CommandTableTest, ArityFollowsRedisConvention) {
  CommandSpec exact = Spec("exact", 2);
  EXPECT_FALSE(ArityOk(exact, 0));
  EXPECT_FALSE(ArityOk(exact, 1));
  EXPECT_TRUE(ArityOk(exact, 2));
  EXPECT_FALSE(ArityOk(exact, 3));

  CommandSpec at_least = Spec("atleast", -3);
  EXPECT_FALSE(ArityOk(at_least, 1));
  EXPECT_FALSE(ArityOk(at_least, 2));
  EXPECT_TRUE(ArityOk(at_least, 3));
  EXPECT_TRUE(ArityOk(at_least, 4));
  EXPECT_TRUE(ArityOk(at_least, 1000));

  CommandSpec any = Spec("any", -1);
  EXPECT_TRUE(ArityOk(any, 1));
  EXPECT_TRUE(ArityOk(any, 7));

  CommandTable table = BuildCommandTable();
  const CommandSpec& get = *table.Find("get");  // GET key
  EXPECT_EQ(get.arity, 2);
  EXPECT_FALSE(ArityOk(get, 1));
  EXPECT_TRUE(ArityOk(get, 2));
  EXPECT_FALSE(ArityOk(get, 3));
  const CommandSpec& set = *table.Find("set");  // SET key value [options]
  EXPECT_EQ(set.arity, -3);
  EXPECT_FALSE(ArityOk(set, 2));
  EXPECT_TRUE(ArityOk(set, 3));
  EXPECT_TRUE(ArityOk(set, 6));
}

TEST(CommandTableTest, RenameToEmptyDisables) {
  CommandTable table = BuildCommandTable();
  size_t before = table.All().size();
  EXPECT_EQ(table.Rename("FLUSHALL", ""), std::nullopt);
  EXPECT_EQ(table.Find("flushall"), nullptr);
  EXPECT_EQ(table.All().size(), before - 1);
  for (const CommandSpec* spec : table.All()) EXPECT_NE(spec->name, "flushall");
  EXPECT_EQ(table.Rename("flushall", ""), "No such command in rename-command") << "a disabled command is unknown";
  EXPECT_NE(table.Find("flushdb"), nullptr);
}

TEST(CommandTableTest, RenameMovesTheCommand) {
  CommandTable table = BuildCommandTable();
  size_t before = table.All().size();
  const CommandSpec* get = table.Find("get");
  ASSERT_NE(get, nullptr);
  int arity = get->arity;
  auto handler = get->handler;
  EXPECT_EQ(table.Rename("get", "FETCH"), std::nullopt);
  EXPECT_EQ(table.Find("get"), nullptr);
  const CommandSpec* fetch = table.Find("fetch");
  ASSERT_NE(fetch, nullptr);
  EXPECT_EQ(fetch->name, "get") << "Redis keeps calling a renamed command by its own name";
  EXPECT_EQ(table.Find("FeTcH"), fetch);
  EXPECT_EQ(fetch->arity, arity);
  EXPECT_TRUE(fetch->handler == handler);
  EXPECT_EQ(table.All().size(), before);
  EXPECT_EQ(std::count(table.All().begin(), table.All().end(), fetch), 1);
}

TEST(CommandTableTest, RenameOfUnknownNameReturnsFalse) {
  CommandTable table = BuildCommandTable();
  size_t before = table.All().size();
  EXPECT_EQ(table.Rename("nosuchcommand", "other"), "No such command in rename-command");
  EXPECT_EQ(table.Rename("nosuchcommand", ""), "No such command in rename-command");
  EXPECT_EQ(table.Rename("", "x"), "No such command in rename-command");
  EXPECT_EQ(table.All().size(), before);
  EXPECT_EQ(table.Find("other"), nullptr);
}

// rename-command accepts a new name of any length, as Redis does.
TEST(CommandTableTest, RenameToALongNameIsFound) {
  CommandTable table = BuildCommandTable();
  std::string long_name = "get_renamed_to_a_name_longer_than_thirty_two_characters";
  ASSERT_EQ(table.Rename("get", long_name), std::nullopt);
  const CommandSpec* spec = table.Find(long_name);
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->name, "get");
  std::string upper = long_name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(table.Find(upper), spec);
}

TEST(CommandTableTest, RenameOntoATakenNameIsRefusedAndChangesNothing) {
  CommandTable table = BuildCommandTable();
  EXPECT_EQ(table.Rename("get", "SET"), "Target command name already exists");
  ASSERT_NE(table.Find("get"), nullptr);
  EXPECT_EQ(table.Find("get")->name, "get");
  EXPECT_EQ(table.Find("set")->name, "set");
}

std::vector<size_t> KeyIndexes(const CommandTable& table, std::vector<std::string_view> args) {
  std::vector<size_t> out;
  ForEachKeyIndex(*table.Find(args[0]), Args(args), [&](size_t i) { out.push_back(i); });
  return out;
}

TEST(CommandTableTest, KeyPositionsNameTheKeys) {
  CommandTable table = BuildCommandTable();
  EXPECT_EQ(KeyIndexes(table, {"mget", "a", "b", "c"}), (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(KeyIndexes(table, {"geosearchstore", "d", "s", "fromlonlat", "1", "2", "byradius", "1", "km"}),
            (std::vector<size_t>{1, 2}));
}

// GEORADIUS's destination moves with its options: its finder names the source, the keys
// Redis's key specs name (after the first STORE and the first STOREDIST), and the
// destination the handler will write in the end.
TEST(CommandTableTest, KeyFinderNamesMovableKeys) {
  CommandTable table = BuildCommandTable();
  EXPECT_EQ(KeyIndexes(table, {"georadius", "g", "1", "2", "3", "km"}), (std::vector<size_t>{1}));
  EXPECT_EQ(KeyIndexes(table, {"georadius", "g", "1", "2", "3", "km", "store", "d1", "storedist", "d2"}),
            (std::vector<size_t>{1, 7, 9}));
  EXPECT_EQ(KeyIndexes(table, {"georadius", "g", "1", "2", "3", "km", "STORE", "a", "STORE", "b"}),
            (std::vector<size_t>{1, 7, 9}));
  // COUNT's value is no keyword, and a keyword with nothing after it names nothing.
  EXPECT_EQ(KeyIndexes(table, {"georadius", "g", "1", "2", "3", "km", "count", "store", "store"}),
            (std::vector<size_t>{1, 8}));
  EXPECT_EQ(KeyIndexes(table, {"georadiusbymember", "g", "m", "3", "km", "storedist", "d"}),
            (std::vector<size_t>{1, 6}));
}

TEST(CommandTableTest, EveryCommandIsWellFormed) {
  CommandTable table = BuildCommandTable();
  ASSERT_FALSE(table.All().empty());
  std::set<std::string> names;
  for (const CommandSpec* spec : table.All()) {
    SCOPED_TRACE(spec->name);
    ASSERT_FALSE(spec->name.empty());
    EXPECT_TRUE(names.insert(spec->name).second) << "listed twice";
    for (char c : spec->name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << "not lower case";
    EXPECT_EQ(table.Find(spec->name), spec);
    EXPECT_NE(spec->arity, 0);
    EXPECT_FALSE(spec->summary.empty());
    EXPECT_FALSE(spec->group.empty());

    int min_args = std::abs(spec->arity);
    if (spec->first_key == 0) {
      // No key: the whole key specification is zero.
      EXPECT_EQ(spec->last_key, 0);
      EXPECT_EQ(spec->key_step, 0);
      continue;
    }
    EXPECT_GT(spec->first_key, 0);
    EXPECT_GE(spec->key_step, 1);
    // A key is an argument after the name; with an exact arity it must exist in every call.
    // (With a variable one it may be optional, as OBJECT HELP's: still within |arity|.)
    EXPECT_LE(spec->first_key, min_args);
    if (spec->arity > 0) {
      EXPECT_LT(spec->first_key, spec->arity);
    }
    if (spec->last_key < 0) {
      // Counted from the end (-1: up to the last argument; -2: all but the last, BLPOP's).
      EXPECT_LT(spec->arity, 0) << "keys counted from the end need a variable arity";
      // -1 holds for any count, also none (SUNSUBSCRIBE's keys are optional, as in Redis).
      if (spec->last_key < -1) {
        EXPECT_LE(-spec->last_key, min_args - spec->first_key);
      }
    } else {
      EXPECT_GE(spec->last_key, spec->first_key);
      EXPECT_EQ((spec->last_key - spec->first_key) % spec->key_step, 0);
      if (spec->arity > 0) {
        EXPECT_LT(spec->last_key, spec->arity);
      }
    }
  }
  EXPECT_EQ(names.size(), table.All().size());
}

}  // namespace
}  // namespace lapse::server
