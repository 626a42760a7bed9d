#include "server/lua_engine.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "server/sha1.h"

namespace lapse::server {
namespace {

// Answers redis.call from a script with canned replies, and records what it was asked.
class FakeHost : public ScriptHost {
 public:
  Refusal Call(const std::vector<std::string_view>& args, protocol::RespVersion, bool, std::string* out) override {
    calls.emplace_back(args.begin(), args.end());
    if (args[0] == "nosuch") return Refusal::kUnknownCommand;
    if (args[0] == "multi") return Refusal::kNotAllowed;
    if (args[0] == "set") {
      out->append("+OK\r\n");
    } else if (args[0] == "incr") {
      out->append("-ERR value is not an integer or out of range\r\n");
    } else if (args[0] == "mget") {
      out->append("*3\r\n$1\r\na\r\n$-1\r\n:7\r\n");
    } else {
      out->append("$-1\r\n");
    }
    return Refusal::kNone;
  }
  std::optional<bool> AclAllows(const std::vector<std::string_view>& args) override {
    if (args[0] == "nosuch") return std::nullopt;
    return args[0] != "flushall";
  }
  std::vector<std::vector<std::string>> calls;
};

class LuaEngineTest : public ::testing::Test {
 protected:
  // Compiles and runs `body` with KEYS and ARGV; returns the reply bytes.
  std::string Eval(std::string_view body, std::vector<std::string_view> keys = {},
                   std::vector<std::string_view> argv = {},
                   protocol::RespVersion resp = protocol::RespVersion::kResp2) {
    std::string sha = Sha1Hex(body);
    if (auto error = lua.Compile(sha, body)) return "-" + *error + "\r\n";
    std::string out;
    protocol::ReplyWriter reply(&out, resp);
    lua.Run(sha, keys, argv, host, reply);
    return out;
  }
  std::string Suffix(std::string_view body, int line = 1) {
    return " script: " + Sha1Hex(body) + ", on @user_script:" + std::to_string(line) + ".\r\n";
  }

  LuaEngine lua;
  FakeHost host;
};

TEST_F(LuaEngineTest, LuaValuesBecomeReplies) {
  EXPECT_EQ(Eval("return 42"), ":42\r\n");
  EXPECT_EQ(Eval("return -3.9"), ":-3\r\n");
  EXPECT_EQ(Eval("return 1e30"), ":-9223372036854775808\r\n");
  EXPECT_EQ(Eval("return 'x'"), "$1\r\nx\r\n");
  EXPECT_EQ(Eval("return true"), ":1\r\n");
  EXPECT_EQ(Eval("return false"), "$-1\r\n");
  EXPECT_EQ(Eval("return {1, 'a', {2}, nil, 5}"), "*3\r\n:1\r\n$1\r\na\r\n*1\r\n:2\r\n");
  EXPECT_EQ(Eval("return {ok='fine'}"), "+fine\r\n");
  EXPECT_EQ(Eval("return {err='BAD x'}"), "-BAD x\r\n");
  EXPECT_EQ(Eval("return {err='two\\nlines'}"), "-two lines\r\n");
}

TEST_F(LuaEngineTest, Resp3ValuesUnderSetresp) {
  auto resp3 = protocol::RespVersion::kResp3;
  EXPECT_EQ(Eval("return true", {}, {}, resp3), ":1\r\n");  // RESP2 rules until setresp(3)
  EXPECT_EQ(Eval("redis.setresp(3); return true", {}, {}, resp3), "#t\r\n");
  EXPECT_EQ(Eval("redis.setresp(3); return {double=1.5}", {}, {}, resp3), ",1.5\r\n");
  EXPECT_EQ(Eval("redis.setresp(3); return {map={a=1}}", {}, {}, resp3), "%1\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(Eval("redis.setresp(3); return redis.call('get', 'x') == nil", {}, {}, resp3), "#t\r\n");
}

TEST_F(LuaEngineTest, KeysAndArgv) {
  EXPECT_EQ(Eval("return {KEYS[1], ARGV[2], #KEYS, #ARGV}", {"k"}, {"a", "b"}),
            "*4\r\n$1\r\nk\r\n$1\r\nb\r\n:1\r\n:2\r\n");
  // A second run does not see the first run's KEYS.
  EXPECT_EQ(Eval("return #KEYS"), ":0\r\n");
}

TEST_F(LuaEngineTest, RedisCallPassesArgumentsAndConvertsReplies) {
  EXPECT_EQ(Eval("return redis.call('set', KEYS[1], 3.5, 10)", {"k"}), "+OK\r\n");
  ASSERT_EQ(host.calls.size(), 1u);
  EXPECT_EQ(host.calls[0], (std::vector<std::string>{"set", "k", "3.5", "10"}));
  EXPECT_EQ(Eval("local r = redis.call('mget'); return {type(r[1]), type(r[2]), type(r[3])}"),
            "*3\r\n$6\r\nstring\r\n$7\r\nboolean\r\n$6\r\nnumber\r\n");
}

TEST_F(LuaEngineTest, CallRaisesAndPcallReturnsErrors) {
  const char* call = "return redis.call('incr', 'k')";
  EXPECT_EQ(Eval(call), "-ERR value is not an integer or out of range" + Suffix(call));
  EXPECT_EQ(Eval("return redis.pcall('incr', 'k')"), "-ERR value is not an integer or out of range\r\n");
  const char* unknown = "\nreturn redis.call('nosuch')";
  EXPECT_EQ(Eval(unknown), "-ERR Unknown Redis command called from script" + Suffix(unknown, 2));
  const char* refused = "return redis.call('multi')";
  EXPECT_EQ(Eval(refused), "-ERR This Redis command is not allowed from script" + Suffix(refused));
  const char* bad_arg = "return redis.call('set', 'k', {})";
  EXPECT_EQ(Eval(bad_arg), "-ERR Lua redis lib command arguments must be strings or integers" + Suffix(bad_arg));
  EXPECT_EQ(host.calls.size(), 4u) << "refused arguments never reach the host";
}

TEST_F(LuaEngineTest, AclCheckCmdAsksTheHostWithoutRunningAnything) {
  EXPECT_EQ(Eval("return redis.acl_check_cmd('get', KEYS[1], 5)", {"k"}), ":1\r\n");
  EXPECT_EQ(Eval("return redis.acl_check_cmd('flushall')"), "$-1\r\n");  // false
  const char* unknown = "return redis.acl_check_cmd('nosuch')";
  EXPECT_EQ(Eval(unknown), "-ERR Invalid command passed to redis.acl_check_cmd()" + Suffix(unknown));
  const char* none = "return redis.acl_check_cmd()";
  EXPECT_EQ(Eval(none), "-ERR Please specify at least one argument for this redis lib call" + Suffix(none));
  const char* bad_arg = "return redis.acl_check_cmd('get', {})";
  EXPECT_EQ(Eval(bad_arg), "-ERR Lua redis lib command arguments must be strings or integers" + Suffix(bad_arg));
  EXPECT_TRUE(host.calls.empty());
}

TEST_F(LuaEngineTest, LibraryTablesStayReadOnlyButCanBeWalked) {
  EXPECT_EQ(Eval("local n = 0 for k in pairs(table) do n = n + 1 end return n"), ":9\r\n");
  EXPECT_EQ(Eval("return type(rawget(string, 'len'))"), "$8\r\nfunction\r\n");
  const char* write = "table.x = 1";
  EXPECT_EQ(Eval(write), "-ERR user_script:1: Attempt to modify a readonly table" + Suffix(write));
  const char* not_a_table = "return pairs(nil)";
  EXPECT_EQ(Eval(not_a_table),
            "-ERR user_script:1: bad argument #1 to 'pairs' (table expected, got nil)" + Suffix(not_a_table));
}

TEST_F(LuaEngineTest, SandboxAndCompileErrors) {
  const char* global = "x = 1";
  EXPECT_EQ(Eval(global), "-ERR user_script:1: Attempt to modify a readonly table" + Suffix(global));
  const char* undefined = "return y";
  EXPECT_EQ(Eval(undefined),
            "-ERR user_script:1: Script attempted to access nonexistent global variable 'y'" + Suffix(undefined));
  const char* library = "string.len = nil";
  EXPECT_EQ(Eval(library), "-ERR user_script:1: Attempt to modify a readonly table" + Suffix(library));
  EXPECT_EQ(Eval("return +"), "-ERR Error compiling script (new function): user_script:1: unexpected symbol near "
                              "'+'\r\n");
  // The state is still sound after every error above.
  EXPECT_EQ(Eval("return cjson.encode({1, 2}) .. bit.tohex(255, 2)"), "$7\r\n[1,2]ff\r\n");
}

TEST_F(LuaEngineTest, CmsgpackAndStructAsRedisBundlesThem) {
  using namespace std::string_literals;  // the replies hold NUL bytes
  EXPECT_EQ(Eval("return cmsgpack.pack(1, -1, 200, 'ab', {1, 2}, {a=true}, 1.5)"),
            "$19\r\n\x01\xff\xcc\xc8\xa2" "ab\x92\x01\x02\x81\xa1" "a\xc3\xca\x3f\xc0\x00\x00\r\n"s);
  EXPECT_EQ(Eval("local a, b = cmsgpack.unpack(cmsgpack.pack({x={1, 'y'}}, 7)) return {a.x[2], b}"),
            "*2\r\n$1\r\ny\r\n:7\r\n");
  EXPECT_EQ(Eval("return cmsgpack.unpack(ARGV[1])", {}, {std::string_view("\x92\x01", 2)}),
            "-ERR user_script:1: Missing bytes in input." + Suffix("return cmsgpack.unpack(ARGV[1])"));
  EXPECT_EQ(Eval("return struct.pack('>i2<i2', 1, 1)"), "$4\r\n\x00\x01\x01\x00\r\n"s);
  EXPECT_EQ(Eval("return {struct.unpack('>h b c0', ARGV[1])}", {}, {std::string_view("\xff\xfe\x02hi!", 6)}),
            "*3\r\n:-2\r\n$2\r\nhi\r\n:6\r\n");
}

TEST_F(LuaEngineTest, CompileOnceRunMany) {
  EXPECT_FALSE(lua.Compile("sha", "return ARGV[1]"));
  EXPECT_FALSE(lua.Compile("sha", "this body is ignored: sha is already compiled"));
  std::vector<std::string_view> none;
  for (std::string_view arg : {"a", "bb"}) {
    std::string out;
    protocol::ReplyWriter reply(&out);
    std::vector<std::string_view> argv{arg};
    lua.Run("sha", none, argv, host, reply);
    EXPECT_EQ(out, "$" + std::to_string(arg.size()) + "\r\n" + std::string(arg) + "\r\n");
  }
}

TEST(LuaFunctionsTest, LoadRegistersAndRunsFunctions) {
  LuaEngine lua(LuaEngine::Mode::kFunctions);
  FakeHost host;
  std::vector<FunctionInfo> functions;
  // The body starts at the newline that ends the "#!lua name=..." line.
  auto error = lua.LoadLibrary(
      "\nredis.register_function{function_name='b', callback=function(keys, args) return {keys[1], args[1]} end, "
      "flags={'no-writes'}, description='d'}\nredis.register_function('a', function() return redis.call('set') end)",
      true, &functions);
  ASSERT_FALSE(error) << *error;
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[0].name, "a");  // sorted by name
  EXPECT_EQ(functions[1].flags, kFunctionNoWrites);
  EXPECT_EQ(functions[1].description, "d");
  std::vector<std::string_view> keys{"k"}, args{"v"};
  std::string out;
  protocol::ReplyWriter reply(&out);
  EXPECT_EQ(lua.RunFunction("b", keys, args, host, reply), LuaEngine::Outcome::kDone);
  EXPECT_EQ(out, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
  out.clear();
  lua.RunFunction("a", {}, {}, host, reply);
  EXPECT_EQ(out, "+OK\r\n");
}

TEST(LuaFunctionsTest, LoadErrorsAndTheLoadEnvironment) {
  LuaEngine lua(LuaEngine::Mode::kFunctions);
  std::vector<FunctionInfo> functions;
  EXPECT_EQ(lua.LoadLibrary("\nreturn +", true, &functions),
            "ERR Error compiling function: user_function:2: unexpected symbol near '+'");
  EXPECT_EQ(lua.LoadLibrary("\nlocal x = 1", true, &functions), "ERR No functions registered");
  EXPECT_EQ(lua.LoadLibrary("\nredis.call('ping')", true, &functions),
            "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global "
            "variable 'call'");
  EXPECT_EQ(lua.LoadLibrary("\nredis.register_function('f', 5)", true, &functions),
            "ERR Error registering functions: ERR second argument to redis.register_function must be a function");
  // A library kept for later cannot register from a function after it has loaded.
  ASSERT_FALSE(lua.LoadLibrary("\nlocal rf = redis.register_function\n"
                               "redis.register_function('late', function() rf('x', function() end) end)",
                               true, &functions));
  FakeHost host;
  std::string out;
  protocol::ReplyWriter reply(&out);
  lua.RunFunction("late", {}, {}, host, reply);
  EXPECT_EQ(out.rfind("-ERR redis.register_function can only be called on FUNCTION LOAD command script: late", 0), 0u)
      << out;
}

}  // namespace
}  // namespace lapse::server
