// File: tests/server/container_commands_test.cc
//
// The container and item commands of issue 4 through the real command table and dispatcher,
// on 1, 2 and 4 threads, with exact replies and errors. Time is the TestServer's manual clock.
// Background reclamation is paused (DEBUG SET-ACTIVE-EXPIRE 0) so that stored / expired
// figures are deterministic; reads never depend on it anyway.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/server/test_server.h"

namespace lapse::server::testing {
namespace {

constexpr std::string_view kTtlErrorTail =
    "' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which "
    "means never expire.";

std::string TtlError(std::string_view value) { return Err("ERR The input ttl '" + std::string(value) + std::string(kTtlErrorTail)); }

// ---- A small RESP reader for replies that are not compared byte for byte ----

struct Resp {
  char type = 0;  // '+', '-', ':', '$', '*', '%', '_', ',', '#'
  std::string str;
  long long num = 0;
  bool null = false;
  std::vector<Resp> elems;
};

Resp ParseResp(std::string_view s, size_t* pos) {
  Resp r;
  r.type = s.at(*pos);
  size_t eol = s.find("\r\n", *pos);
  std::string head(s.substr(*pos + 1, eol - *pos - 1));
  *pos = eol + 2;
  switch (r.type) {
    case '+':
    case '-':
    case ',':  // RESP3 double
    case '#':  // RESP3 boolean
      r.str = head;
      break;
    case ':':
      r.num = std::stoll(head);
      break;
    case '_':
      r.null = true;
      break;
    case '$': {
      long long n = std::stoll(head);
      if (n < 0) {
        r.null = true;
        break;
      }
      r.str = std::string(s.substr(*pos, static_cast<size_t>(n)));
      *pos += static_cast<size_t>(n) + 2;
      break;
    }
    case '*':
    case '%': {
      long long n = std::stoll(head);
      if (n < 0) {
        r.null = true;
        break;
      }
      if (r.type == '%') n *= 2;
      for (long long i = 0; i < n; ++i) r.elems.push_back(ParseResp(s, pos));
      break;
    }
    default:
      ADD_FAILURE() << "unexpected RESP type in " << s;
  }
  return r;
}

Resp ParseResp(std::string_view s) {
  size_t pos = 0;
  Resp r = ParseResp(s, &pos);
  EXPECT_EQ(pos, s.size()) << "trailing bytes in " << s;
  return r;
}

class ContainerCommandsTest : public ::testing::TestWithParam<int> {
 protected:
  ContainerCommandsTest() : t_(GetParam(), {{"enable-debug-command", "yes"}}) {
    EXPECT_EQ(Run({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}), kOk);
  }
  std::string Run(std::vector<std::string> cmd) { return t_.Run(std::move(cmd)); }
  void Advance(int64_t ms) { t_.clock().Advance(ms); }
  int64_t NowMs() { return t_.clock().NowMs(); }

  // IPUT expecting an etag; returns it.
  std::string Put(const std::string& c, const std::string& id, const std::string& json) {
    std::string reply = Run({"IPUT", c, id, json});
    Resp r = ParseResp(reply);
    EXPECT_EQ(r.type, '$') << reply;
    EXPECT_EQ(r.str.size(), 16u) << reply;
    EXPECT_EQ(r.str.find_first_not_of("0123456789abcdef"), std::string::npos) << reply;
    return r.str;
  }
  // The document IGET must return for a body `{members}` written at `ts_ms` with `etag`.
  static std::string Doc(const std::string& id, const std::string& members, int64_t ts_ms, const std::string& etag) {
    std::string d = "{\"id\":\"" + id + "\"";
    if (!members.empty()) d += "," + members;
    return d + ",\"_ts\":" + std::to_string(ts_ms / 1000) + ",\"_etag\":\"" + etag + "\"}";
  }
  std::map<std::string, std::string> CInfo(const std::string& c) {
    std::string reply = Run({"CINFO", c});
    Resp r = ParseResp(reply);
    std::map<std::string, std::string> fields;
    EXPECT_EQ(r.type, '*') << reply;
    EXPECT_EQ(r.elems.size() % 2, 0u);
    for (size_t i = 0; i + 1 < r.elems.size(); i += 2) {
      const Resp& v = r.elems[i + 1];
      fields[r.elems[i].str] = v.null ? "nil" : v.type == ':' ? std::to_string(v.num) : v.str;
    }
    return fields;
  }
  std::vector<std::string> List() {
    Resp r = ParseResp(Run({"CLIST"}));
    std::vector<std::string> names;
    for (auto& e : r.elems) names.push_back(e.str);
    return names;
  }
  bool Listed(const std::string& c) {
    for (auto& n : List()) {
      if (n == c) return true;
    }
    return false;
  }
  // Full ISCAN iteration; returns every document seen (with repeats), checking each reply.
  std::vector<std::string> ScanAll(const std::string& c, std::vector<std::string> extra = {}) {
    std::vector<std::string> docs;
    std::string cursor = "0";
    for (int calls = 0; calls < 100000; ++calls) {
      std::vector<std::string> cmd = {"ISCAN", c, cursor};
      cmd.insert(cmd.end(), extra.begin(), extra.end());
      std::string reply = Run(cmd);
      Resp r = ParseResp(reply);
      EXPECT_EQ(r.type, '*') << reply;
      if (r.elems.size() != 2) {
        ADD_FAILURE() << reply;
        return docs;
      }
      for (auto& d : r.elems[1].elems) docs.push_back(d.str);
      cursor = r.elems[0].str;
      if (cursor == "0") return docs;
    }
    ADD_FAILURE() << "ISCAN never finished";
    return docs;
  }
  static std::string IdOf(const std::string& doc) {
    // Documents start {"id":"<id>" and ids here need no escaping.
    EXPECT_EQ(doc.rfind("{\"id\":\"", 0), 0u) << doc;
    size_t end = doc.find('"', 7);
    return doc.substr(7, end - 7);
  }

  TestServer t_;
};

// ---- Container settings ----

TEST_P(ContainerCommandsTest, CSetTtlAndCGetTtl) {
  EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  EXPECT_EQ(Run({"CLIST"}), "*0\r\n");
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  EXPECT_EQ(Run({"CGETTTL", "c"}), Int(10));
  EXPECT_EQ(Run({"CSETTTL", "c", "-1"}), kOk);
  EXPECT_EQ(Run({"CGETTTL", "c"}), Int(-1));
  EXPECT_EQ(Run({"CSETTTL", "c", "1"}), kOk);
  EXPECT_EQ(Run({"CGETTTL", "c"}), Int(1));
  EXPECT_EQ(Run({"CSETTTL", "c", "2147483647"}), kOk);
  EXPECT_EQ(Run({"CGETTTL", "c"}), Int(2147483647));
  for (const char* off : {"OFF", "off", "Off", "oFf", "NULL", "null", "Null", "nUlL"}) {
    SCOPED_TRACE(off);
    EXPECT_EQ(Run({"CSETTTL", "c", "7"}), kOk);
    EXPECT_EQ(Run({"CSETTTL", "c", off}), kOk);
    EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  }
  EXPECT_EQ(Run({"CLIST"}), "*1\r\n" + Bulk("c"));  // OFF keeps the container
  // CSETTTL creates the container, with the given setting.
  EXPECT_EQ(Run({"CSETTTL", "fresh", "OFF"}), kOk);
  EXPECT_EQ(Run({"CGETTTL", "fresh"}), kNil);
  EXPECT_TRUE(Listed("fresh"));
  EXPECT_EQ(Run({"CSETTTL", "fresh2", "5"}), kOk);
  EXPECT_EQ(Run({"CGETTTL", "fresh2"}), Int(5));
}

TEST_P(ContainerCommandsTest, CSetTtlRejectsInvalidValuesAndChangesNothing) {
  EXPECT_EQ(Run({"CSETTTL", "c", "30"}), kOk);
  const std::vector<std::string> bad = {"0",  "-2", "1.5", "2147483648", "abc", "",      "-0",   "+5",   "05",
                                        " 5", "5 ", "1e3", "10.0",       "-1.0", "OFFF", "NUL",  "\"10\"", "true",
                                        "99999999999999999999", "-2147483648", "0x10", "of f"};
  for (const std::string& v : bad) {
    SCOPED_TRACE(v);
    EXPECT_EQ(Run({"CSETTTL", "c", v}), TtlError(v));
    EXPECT_EQ(Run({"CGETTTL", "c"}), Int(30));
    // A rejected CSETTTL does not create the container.
    EXPECT_EQ(Run({"CSETTTL", "new", v}), TtlError(v));
    EXPECT_EQ(Run({"CGETTTL", "new"}), kNil);
  }
  EXPECT_EQ(Run({"CLIST"}), "*1\r\n" + Bulk("c"));
  EXPECT_EQ(Run({"CINFO", "new"}), kNil);
  // A value with CR LF cannot break the reply's framing.
  EXPECT_EQ(Run({"CSETTTL", "c", "1\r\n+OK"}), TtlError("1  +OK"));
  EXPECT_EQ(Run({"CGETTTL", "c"}), Int(30));
}

TEST_P(ContainerCommandsTest, Arity) {
  EXPECT_EQ(Run({"CSETTTL", "c"}), Err("ERR wrong number of arguments for 'csetttl' command"));
  EXPECT_EQ(Run({"CSETTTL", "c", "1", "2"}), Err("ERR wrong number of arguments for 'csetttl' command"));
  EXPECT_EQ(Run({"CGETTTL"}), Err("ERR wrong number of arguments for 'cgetttl' command"));
  EXPECT_EQ(Run({"CLIST", "x"}), Err("ERR wrong number of arguments for 'clist' command"));
  EXPECT_EQ(Run({"CDROP"}), Err("ERR wrong number of arguments for 'cdrop' command"));
  EXPECT_EQ(Run({"CINFO"}), Err("ERR wrong number of arguments for 'cinfo' command"));
  EXPECT_EQ(Run({"IPUT", "c", "a"}), Err("ERR wrong number of arguments for 'iput' command"));
  EXPECT_EQ(Run({"IGET", "c"}), Err("ERR wrong number of arguments for 'iget' command"));
  EXPECT_EQ(Run({"IGET", "c", "a", "b"}), Err("ERR wrong number of arguments for 'iget' command"));
  EXPECT_EQ(Run({"IDEL", "c"}), Err("ERR wrong number of arguments for 'idel' command"));
  EXPECT_EQ(Run({"ITTL", "c"}), Err("ERR wrong number of arguments for 'ittl' command"));
  EXPECT_EQ(Run({"IPTTL", "c", "a", "b"}), Err("ERR wrong number of arguments for 'ipttl' command"));
  EXPECT_EQ(Run({"ICOUNT"}), Err("ERR wrong number of arguments for 'icount' command"));
  EXPECT_EQ(Run({"ISCAN", "c"}), Err("ERR wrong number of arguments for 'iscan' command"));
  EXPECT_EQ(Run({"CLIST"}), "*0\r\n");
}

TEST_P(ContainerCommandsTest, CListIsSorted) {
  for (const char* c : {"b", "a", "C", "aa", "_", "a b", "10", "9"}) EXPECT_EQ(Run({"CSETTTL", c, "OFF"}), kOk);
  Put("z", "x", "{}");  // IPUT creates one too
  EXPECT_EQ(List(), (std::vector<std::string>{"10", "9", "C", "_", "a", "a b", "aa", "b", "z"}));
  EXPECT_EQ(Run({"CDROP", "a"}), Int(1));
  EXPECT_EQ(List(), (std::vector<std::string>{"10", "9", "C", "_", "a b", "aa", "b", "z"}));
}

TEST_P(ContainerCommandsTest, CDropRemovesEverythingAtOnce) {
  EXPECT_EQ(Run({"CDROP", "c"}), Int(0));
  EXPECT_EQ(Run({"CSETTTL", "c", "100"}), kOk);
  for (int i = 0; i < 50; ++i) Put("c", "i" + std::to_string(i), "{\"n\":" + std::to_string(i) + "}");
  Put("other", "i0", "{}");
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(50));
  EXPECT_EQ(Run({"CDROP", "c"}), Int(1));
  EXPECT_EQ(Run({"CDROP", "c"}), Int(0));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(Run({"IGET", "c", "i" + std::to_string(i)}), kNil);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(0));
  EXPECT_EQ(Run({"ITTL", "c", "i1"}), Int(-2));
  EXPECT_EQ(Run({"IDEL", "c", "i1", "i2"}), Int(0));
  EXPECT_EQ(Run({"ISCAN", "c", "0"}), "*2\r\n" + Bulk("0") + "*0\r\n");
  EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  EXPECT_EQ(Run({"CINFO", "c"}), kNil);
  EXPECT_EQ(List(), std::vector<std::string>{"other"});
  EXPECT_EQ(Run({"IGET", "other", "i0"}).substr(0, 1), "$");
  // Re-created: empty, TTL off.
  Put("c", "new", "{}");
  EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
  EXPECT_EQ(Run({"IGET", "c", "i3"}), kNil);
  EXPECT_EQ(ScanAll("c").size(), 1u);
  // The dropped items' memory is reclaimed in the background.
  EXPECT_EQ(Run({"DEBUG", "SET-ACTIVE-EXPIRE", "1"}), kOk);
  auto info = CInfo("c");
  EXPECT_EQ(info["stored_items"], "1");
}

TEST_P(ContainerCommandsTest, CInfoFields) {
  EXPECT_EQ(Run({"CINFO", "c"}), kNil);
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  auto info = CInfo("c");
  for (const char* field : {"default_ttl", "live_items", "stored_items", "expired_unreclaimed", "reclaimed_total",
                            "oldest_unreclaimed_ms"}) {
    EXPECT_EQ(info.count(field), 1u) << field;
  }
  EXPECT_EQ(info["default_ttl"], "10");
  EXPECT_EQ(info["live_items"], "0");
  EXPECT_EQ(info["stored_items"], "0");
  EXPECT_EQ(info["expired_unreclaimed"], "0");
  EXPECT_EQ(info["reclaimed_total"], "0");
  EXPECT_EQ(info["oldest_unreclaimed_ms"], "0");
  for (int i = 0; i < 20; ++i) Put("c", "i" + std::to_string(i), "{}");
  Put("c", "own", "{\"ttl\":3}");
  Put("c", "pinned", "{\"ttl\":-1}");
  Advance(3'500);
  info = CInfo("c");
  EXPECT_EQ(info["live_items"], "21");
  EXPECT_EQ(info["stored_items"], "22");
  EXPECT_EQ(info["expired_unreclaimed"], "1");
  EXPECT_EQ(info["oldest_unreclaimed_ms"], "500");
  Advance(7'000);  // the default's items expired 500 ms ago, "own" 7.5 s ago
  info = CInfo("c");
  EXPECT_EQ(info["live_items"], "1");
  EXPECT_EQ(info["stored_items"], "22");
  EXPECT_EQ(info["expired_unreclaimed"], "21");
  EXPECT_EQ(info["oldest_unreclaimed_ms"], "7500");
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
  // A read that meets an expired item reclaims it.
  EXPECT_EQ(Run({"IGET", "c", "own"}), kNil);
  info = CInfo("c");
  EXPECT_EQ(info["stored_items"], "21");
  EXPECT_EQ(info["reclaimed_total"], "1");
  EXPECT_EQ(info["oldest_unreclaimed_ms"], "500");
  // OFF: everything stored is live again.
  EXPECT_EQ(Run({"CSETTTL", "c", "OFF"}), kOk);
  info = CInfo("c");
  EXPECT_EQ(info["default_ttl"], "nil");
  EXPECT_EQ(info["live_items"], "21");
  EXPECT_EQ(info["expired_unreclaimed"], "0");
  EXPECT_EQ(info["oldest_unreclaimed_ms"], "0");
  // On again: reads that meet the expired items reclaim them.
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Run({"IGET", "c", "i" + std::to_string(i)}), kNil);
  info = CInfo("c");
  EXPECT_EQ(info["stored_items"], "1");
  EXPECT_EQ(info["live_items"], "1");
  EXPECT_EQ(info["expired_unreclaimed"], "0");
  EXPECT_EQ(info["reclaimed_total"], "21");
  EXPECT_EQ(info["oldest_unreclaimed_ms"], "0");
}

TEST_P(ContainerCommandsTest, CInfoResp3IsAMap) {
  EXPECT_EQ(Run({"HELLO", "3"}).substr(0, 1), "%");
  EXPECT_EQ(Run({"CSETTTL", "c", "-1"}), kOk);
  std::string reply = Run({"CINFO", "c"});
  Resp r = ParseResp(reply);
  EXPECT_EQ(r.type, '%') << reply;
  EXPECT_NE(reply.find("$11\r\ndefault_ttl\r\n:-1\r\n"), std::string::npos) << reply;
  EXPECT_EQ(Run({"CINFO", "missing"}), "_\r\n");
  EXPECT_EQ(Run({"CGETTTL", "missing"}), "_\r\n");
  EXPECT_EQ(Run({"IGET", "c", "missing"}), "_\r\n");
}

// ---- IPUT / IGET ----

TEST_P(ContainerCommandsTest, IPutUpsertAndIGetFormat) {
  int64_t t0 = NowMs();
  std::string members = R"("name":"caf\u00e9 日本","n":1e3,"z":-0,"nested":{"a":[1,{"b":null}]},"ttl":60)";
  std::string etag1 = Put("c", "a", "{" + members + "}");
  // IPUT created the container, TTL off.
  EXPECT_EQ(List(), std::vector<std::string>{"c"});
  EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  EXPECT_EQ(Run({"IGET", "c", "a"}), Bulk(Doc("a", members, t0, etag1)));
  // Upsert: replaces; "id" in the body is fine when it matches; _ts/_etag from the client go.
  Advance(2'345);
  int64_t t1 = NowMs();
  std::string etag2 = Put("c", "a", R"({"_ts":1,"id":"a","v":2,"_etag":"x"})");
  EXPECT_NE(etag1, etag2);
  EXPECT_EQ(Run({"IGET", "c", "a"}), Bulk(Doc("a", R"("v":2)", t1, etag2)));
  EXPECT_EQ(t1 / 1000, t0 / 1000 + 2);  // _ts is whole seconds of the last write
  // A read does not change _ts or _etag.
  Advance(5'000);
  EXPECT_EQ(Run({"IGET", "c", "a"}), Bulk(Doc("a", R"("v":2)", t1, etag2)));
  EXPECT_EQ(Run({"IGET", "c", "missing"}), kNil);
  EXPECT_EQ(Run({"IGET", "nocontainer", "a"}), kNil);
  EXPECT_EQ(List(), std::vector<std::string>{"c"});  // reads create nothing
  // Ids with escapes in the body, unicode ids, ids that need JSON escaping on output.
  std::string e = Put("c", "b", R"({"id":"\u0062","k":"v"})");
  EXPECT_EQ(Run({"IGET", "c", "b"}), Bulk(Doc("b", R"("k":"v")", NowMs(), e)));
  e = Put("c", "日本", R"({"id":"日本"})");
  EXPECT_EQ(Run({"IGET", "c", "日本"}), Bulk(Doc("日本", "", NowMs(), e)));
  e = Put("c", "q\"t", "{}");
  EXPECT_EQ(Run({"IGET", "c", "q\"t"}), Bulk(R"({"id":"q\"t","_ts":)" + std::to_string(NowMs() / 1000) + R"(,"_etag":")" + e + "\"}"));
  // Empty object; whitespace between members is not kept, members are.
  e = Put("c", "w", " {\n \"a\" : 1 ,\t\"b\":[ 2 ] } ");
  EXPECT_EQ(Run({"IGET", "c", "w"}), Bulk(Doc("w", R"("a" : 1,"b":[ 2 ])", NowMs(), e)));
}

TEST_P(ContainerCommandsTest, IPutConditions) {
  // NX / XX / IFMATCH on a missing container: only NX writes (and creates it).
  EXPECT_EQ(Run({"IPUT", "c", "a", "{}", "XX"}), kNil);
  EXPECT_EQ(Run({"IPUT", "c", "a", "{}", "IFMATCH", "0001000000000001"}), kNil);
  EXPECT_EQ(Run({"CLIST"}), "*0\r\n");
  std::string reply = Run({"IPUT", "c", "a", "{\"v\":1}", "NX"});
  std::string etag1 = ParseResp(reply).str;
  ASSERT_EQ(etag1.size(), 16u) << reply;
  EXPECT_EQ(Run({"IPUT", "c", "a", "{\"v\":2}", "NX"}), kNil);
  EXPECT_EQ(Run({"IPUT", "c", "b", "{}", "XX"}), kNil);
  EXPECT_EQ(Run({"IGET", "c", "b"}), kNil);
  std::string etag2 = ParseResp(Run({"IPUT", "c", "a", "{\"v\":3}", "xx"})).str;
  ASSERT_EQ(etag2.size(), 16u);
  EXPECT_EQ(Run({"IPUT", "c", "a", "{\"v\":4}", "IFMATCH", etag1}), kNil);
  EXPECT_EQ(Run({"IPUT", "c", "a", "{\"v\":4}", "IFMATCH", "not-an-etag"}), kNil);
  EXPECT_EQ(Run({"IPUT", "c", "a", "{\"v\":4}", "IFMATCH", ""}), kNil);
  EXPECT_EQ(Run({"IPUT", "c", "zz", "{\"v\":4}", "IFMATCH", etag2}), kNil);
  std::string etag3 = ParseResp(Run({"IPUT", "c", "a", "{\"v\":5}", "ifmatch", etag2})).str;
  ASSERT_EQ(etag3.size(), 16u);
  std::string etag4 = ParseResp(Run({"IPUT", "c", "a", "{\"v\":6}", "XX", "IFMATCH", etag3})).str;
  ASSERT_EQ(etag4.size(), 16u);
  // NX and IFMATCH could never both hold: refused as a syntax error, like NX XX.
  EXPECT_EQ(Run({"IPUT", "c", "a", "{\"v\":7}", "IFMATCH", etag4, "NX"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"IPUT", "c", "a", "{\"v\":7}", "NX", "IFMATCH", etag4}), Err("ERR syntax error"));
  std::string doc = ParseResp(Run({"IGET", "c", "a"})).str;
  EXPECT_NE(doc.find("\"v\":6"), std::string::npos) << doc;
  EXPECT_NE(doc.find(etag4), std::string::npos) << doc;
  // Syntax errors.
  EXPECT_EQ(Run({"IPUT", "c", "a", "{}", "NX", "XX"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"IPUT", "c", "a", "{}", "XX", "XX"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"IPUT", "c", "a", "{}", "IFMATCH"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"IPUT", "c", "a", "{}", "IFMATCH", etag4, "IFMATCH", etag4}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"IPUT", "c", "a", "{}", "EX", "10"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"IGET", "c", "a"}), Bulk(doc));

  // An expired item counts as absent for all three.
  EXPECT_EQ(Run({"CSETTTL", "c", "5"}), kOk);
  std::string e = Put("c", "x", "{}");
  Advance(5'000);
  EXPECT_EQ(Run({"IPUT", "c", "x", "{}", "XX"}), kNil);
  EXPECT_EQ(Run({"IPUT", "c", "x", "{}", "IFMATCH", e}), kNil);
  EXPECT_EQ(Run({"IGET", "c", "x"}), kNil);
  e = Put("c", "y", "{}");
  Advance(5'000);
  reply = Run({"IPUT", "c", "y", "{\"fresh\":true}", "NX"});
  EXPECT_EQ(ParseResp(reply).str.size(), 16u) << reply;
  EXPECT_EQ(Run({"IGET", "c", "y"}), Bulk(Doc("y", R"("fresh":true)", NowMs(), ParseResp(reply).str)));
}

TEST_P(ContainerCommandsTest, IPutErrorsChangeNothing) {
  std::string etag = Put("c", "a", R"({"v":1,"ttl":100})");
  std::string before = Run({"IGET", "c", "a"});
  std::string too_big = "{\"x\":\"" + std::string(2 * 1024 * 1024, 'x') + "\"}";
  struct Case {
    std::string id, json, error;
  };
  const std::vector<Case> cases = {
      {"a", "{", "ERR the item is not valid JSON: "},
      {"a", "", "ERR the item is not valid JSON: "},
      {"a", "{\"v\":1,}", "ERR the item is not valid JSON: "},
      {"a", "[1,2]", "ERR the item must be a JSON object"},
      {"a", "\"str\"", "ERR the item must be a JSON object"},
      {"a", "42", "ERR the item must be a JSON object"},
      {"a", "null", "ERR the item must be a JSON object"},
      {"a", R"({"id":"b"})", "ERR the item's \"id\" property must be a string equal to the id argument"},
      {"a", R"({"id":1})", "ERR the item's \"id\" property must be a string equal to the id argument"},
      {"a", R"({"id":null})", "ERR the item's \"id\" property must be a string equal to the id argument"},
      {"a", too_big, "ERR the item is larger than the maximum of 2097152 bytes"},
      {"a", R"({"v":1,"v":2})", "ERR the item has the property 'v' more than once"},
      {"a", R"({"id":"a","id":"a"})", "ERR the item has the property 'id' more than once"},
      {"", "{}", "ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'"},
      {"a/b", "{}", "ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'"},
      {"a#", "{}", "ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'"},
      {std::string(256, 'i'), "{}",
       "ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'"},
      {"\xff", "{}", "ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'"},
  };
  for (const std::string& container : {std::string("c"), std::string("newc")}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(container + " " + c.id + " " + c.json.substr(0, 40));
      std::string reply = Run({"IPUT", container, c.id, c.json});
      EXPECT_EQ(reply.rfind("-" + c.error, 0), 0u) << reply;
      EXPECT_EQ(reply.find('\n'), reply.size() - 1);  // one line
    }
    for (const char* v : {"0", "-2", "null", "1.5", "\"10\"", "true", "2147483648", "1e3", "-0", "10.0", "[]", "{}",
                          "99999999999999999999", "1e400"}) {
      SCOPED_TRACE(v);
      EXPECT_EQ(Run({"IPUT", container, "a", std::string(R"({"v":2,"ttl":)") + v + "}"}), TtlError(v));
      EXPECT_EQ(Run({"IPUT", container, "a", std::string(R"({"v":2,"ttl":)") + v + "}", "XX"}), TtlError(v));
    }
  }
  EXPECT_EQ(Run({"IGET", "c", "a"}), before);
  EXPECT_EQ(List(), std::vector<std::string>{"c"});  // no container created by a rejected IPUT
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
  // The item's ttl is validated even while the container's TTL is off.
  EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  EXPECT_EQ(Run({"IPUT", "c", "a", R"({"ttl":0})"}), TtlError("0"));
  EXPECT_EQ(Run({"IGET", "c", "a"}), before);
  (void)etag;
}

// Container names follow the item id rule; every command that names a container checks it
// first, and a refused name creates nothing.
TEST_P(ContainerCommandsTest, InvalidContainerNamesAreRefusedEverywhere) {
  const std::string error = Err("ERR invalid container name: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'");
  for (const std::string& name : {std::string(), std::string("a/b"), std::string("a\\b"), std::string("a?"),
                                  std::string("#"), std::string(256, 'c'), std::string("\xff\xfe")}) {
    SCOPED_TRACE(name.substr(0, 20));
    for (const std::vector<std::string>& cmd :
         std::vector<std::vector<std::string>>{{"CSETTTL", name, "10"}, {"CGETTTL", name}, {"CDROP", name}, {"CINFO", name},
                                               {"CSETRU", name, "10"}, {"CGETRU", name}, {"IPUT", name, "a", "{}"},
                                               {"IGET", name, "a"}, {"IDEL", name, "a"}, {"ITTL", name, "a"},
                                               {"IPTTL", name, "a"}, {"ICOUNT", name}, {"ISCAN", name, "0"}}) {
      EXPECT_EQ(Run(cmd), error) << cmd[0];
    }
  }
  EXPECT_EQ(List(), std::vector<std::string>{});
  // The longest name and multi-byte UTF-8 are fine.
  EXPECT_EQ(Run({"CSETTTL", std::string(255, 'c'), "10"}), kOk);
  EXPECT_EQ(Run({"IPUT", "日本", "a", "{}"}).size(), 23u);  // $16 + etag
}

// ---- IDEL / ITTL / IPTTL / ICOUNT ----

TEST_P(ContainerCommandsTest, IDelCountsOnlyLiveItems) {
  EXPECT_EQ(Run({"IDEL", "c", "a"}), Int(0));
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  for (int i = 0; i < 20; ++i) Put("c", "i" + std::to_string(i), i % 2 ? "{}" : "{\"ttl\":-1}");
  Advance(10'000);  // the odd ones expire
  std::vector<std::string> cmd = {"IDEL", "c"};
  for (int i = 0; i < 20; ++i) cmd.push_back("i" + std::to_string(i));
  cmd.push_back("missing");
  cmd.push_back("i0");  // twice: deleted once
  EXPECT_EQ(Run(cmd), Int(10));
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(0));
  EXPECT_EQ(Run({"CSETTTL", "c", "OFF"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(0));  // the expired ones were reclaimed by IDEL, not revived
  EXPECT_EQ(CInfo("c")["stored_items"], "0");
}

TEST_P(ContainerCommandsTest, ITtlAndIPTtlUnderCurrentSettings) {
  EXPECT_EQ(Run({"ITTL", "c", "a"}), Int(-2));
  EXPECT_EQ(Run({"IPTTL", "c", "a"}), Int(-2));
  Put("c", "inherit", "{}");
  Put("c", "own", "{\"ttl\":30}");
  Put("c", "pinned", "{\"ttl\":-1}");
  // OFF: nothing expires.
  for (const char* id : {"inherit", "own", "pinned"}) {
    EXPECT_EQ(Run({"ITTL", "c", id}), Int(-1)) << id;
    EXPECT_EQ(Run({"IPTTL", "c", id}), Int(-1)) << id;
  }
  EXPECT_EQ(Run({"CSETTTL", "c", "-1"}), kOk);
  EXPECT_EQ(Run({"ITTL", "c", "inherit"}), Int(-1));
  EXPECT_EQ(Run({"IPTTL", "c", "own"}), Int(30'000));
  EXPECT_EQ(Run({"ITTL", "c", "own"}), Int(30));
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  EXPECT_EQ(Run({"IPTTL", "c", "inherit"}), Int(10'000));
  EXPECT_EQ(Run({"IPTTL", "c", "own"}), Int(30'000));
  EXPECT_EQ(Run({"ITTL", "c", "pinned"}), Int(-1));
  Advance(2'600);
  EXPECT_EQ(Run({"IPTTL", "c", "inherit"}), Int(7'400));
  EXPECT_EQ(Run({"ITTL", "c", "inherit"}), Int(7));  // rounded, as Redis's TTL
  EXPECT_EQ(Run({"IPTTL", "c", "own"}), Int(27'400));
  // Raising / lowering the default moves the answer at once.
  EXPECT_EQ(Run({"CSETTTL", "c", "100"}), kOk);
  EXPECT_EQ(Run({"IPTTL", "c", "inherit"}), Int(97'400));
  EXPECT_EQ(Run({"CSETTTL", "c", "3"}), kOk);
  EXPECT_EQ(Run({"IPTTL", "c", "inherit"}), Int(400));
  Advance(399);
  EXPECT_EQ(Run({"IPTTL", "c", "inherit"}), Int(1));
  Advance(1);
  EXPECT_EQ(Run({"IPTTL", "c", "inherit"}), Int(-2));
  EXPECT_EQ(Run({"ITTL", "c", "inherit"}), Int(-2));
  // A rewrite resets the countdown.
  Advance(20'000);
  EXPECT_EQ(Run({"IPTTL", "c", "own"}), Int(7'000));
  Put("c", "own", "{\"ttl\":30}");
  EXPECT_EQ(Run({"IPTTL", "c", "own"}), Int(30'000));
  // Removing ttl makes it inherit the default.
  Put("c", "own", "{}");
  EXPECT_EQ(Run({"IPTTL", "c", "own"}), Int(3'000));
}

TEST_P(ContainerCommandsTest, ICount) {
  EXPECT_EQ(Run({"ICOUNT", "missing"}), Int(0));
  EXPECT_EQ(Run({"CSETTTL", "c", "5"}), kOk);
  for (int i = 0; i < 30; ++i) Put("c", "i" + std::to_string(i), i < 10 ? "{\"ttl\":-1}" : "{}");
  Advance(4'999);
  for (int i = 20; i < 30; ++i) Put("c", "i" + std::to_string(i), "{}");  // rewritten: later deadline
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(30));
  Advance(1);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(20));
  EXPECT_EQ(Run({"CSETTTL", "c", "OFF"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(30));
  EXPECT_EQ(Run({"CSETTTL", "c", "5"}), kOk);
  Advance(4'999);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(10));
}

// ---- The matrix and transitions through the commands ----

TEST_P(ContainerCommandsTest, MatrixAtTheMillisecond) {
  // Containers: off / -1 / 10; items: no ttl / -1 / 4 and 15.
  EXPECT_EQ(Run({"CSETTTL", "minus", "-1"}), kOk);
  EXPECT_EQ(Run({"CSETTTL", "ten", "10"}), kOk);
  for (const char* c : {"off", "minus", "ten"}) {
    Put(c, "none", "{}");
    Put(c, "pinned", "{\"ttl\":-1}");
    Put(c, "four", "{\"ttl\":4}");
    Put(c, "fifteen", "{\"ttl\":15}");
  }
  auto live = [&](const char* c, const char* id) { return Run({"IGET", c, id}) != kNil; };
  Advance(3'999);
  EXPECT_TRUE(live("minus", "four"));
  EXPECT_TRUE(live("ten", "four"));
  Advance(1);
  EXPECT_FALSE(live("minus", "four"));
  EXPECT_FALSE(live("ten", "four"));
  EXPECT_TRUE(live("off", "four"));
  Advance(5'999);  // 9.999 s
  EXPECT_TRUE(live("ten", "none"));
  Advance(1);
  EXPECT_FALSE(live("ten", "none"));
  EXPECT_TRUE(live("ten", "fifteen"));
  EXPECT_TRUE(live("minus", "none"));
  Advance(4'999);  // 14.999 s
  EXPECT_TRUE(live("ten", "fifteen"));
  EXPECT_TRUE(live("minus", "fifteen"));
  Advance(1);
  EXPECT_FALSE(live("ten", "fifteen"));
  EXPECT_FALSE(live("minus", "fifteen"));
  Advance(int64_t{3'000'000'000} * 1000);  // beyond any ttl
  for (const char* id : {"none", "pinned", "four", "fifteen"}) EXPECT_TRUE(live("off", id)) << id;
  EXPECT_TRUE(live("minus", "none"));
  EXPECT_TRUE(live("minus", "pinned"));
  EXPECT_TRUE(live("ten", "pinned"));
  EXPECT_EQ(Run({"ICOUNT", "off"}), Int(4));
  EXPECT_EQ(Run({"ICOUNT", "minus"}), Int(2));
  EXPECT_EQ(Run({"ICOUNT", "ten"}), Int(1));
}

TEST_P(ContainerCommandsTest, TransitionsApplyToExistingItems) {
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  Put("c", "old", "{}");
  Put("c", "own", "{\"ttl\":5}");
  Advance(6'000);
  Put("c", "young", "{}");
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(2));  // own expired
  // Lowering the default hides old items at once.
  EXPECT_EQ(Run({"CSETTTL", "c", "3"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
  EXPECT_EQ(ScanAll("c").size(), 1u);
  // Raising it brings them back (not yet reclaimed: nothing read them).
  EXPECT_EQ(Run({"CSETTTL", "c", "60"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(2));
  // OFF brings back the own-ttl item too, and suspends expiry.
  EXPECT_EQ(Run({"CSETTTL", "c", "off"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(3));
  EXPECT_NE(Run({"IGET", "c", "own"}), kNil);
  Advance(1'000'000);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(3));
  EXPECT_EQ(Run({"ITTL", "c", "own"}), Int(-1));
  // Back on: everything past its time vanishes at once.
  EXPECT_EQ(Run({"CSETTTL", "c", "60"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(0));
  EXPECT_EQ(Run({"IGET", "c", "own"}), kNil);
  EXPECT_EQ(Run({"IGET", "c", "young"}), kNil);
  EXPECT_EQ(ScanAll("c").size(), 0u);
  EXPECT_EQ(Run({"IDEL", "c", "old"}), Int(0));
}

TEST_P(ContainerCommandsTest, SettingIsSeenByEverySessionAtOnce) {
  auto other = t_.NewSession();
  EXPECT_EQ(Run({"CSETTTL", "c", "100"}), kOk);
  std::vector<std::string> ids;
  for (int i = 0; i < 16; ++i) {
    ids.push_back("i" + std::to_string(i));  // spread over the shards
    Put("c", ids.back(), "{}");
  }
  Advance(50'000);
  for (int round = 0; round < 5; ++round) {
    // Lowered: the other session counts and scans none (per-item reads would reclaim them).
    EXPECT_EQ(Run({"CSETTTL", "c", "40"}), kOk);
    EXPECT_EQ(t_.Run({"ICOUNT", "c"}, other.get()), Int(0));
    EXPECT_EQ(t_.Run({"ISCAN", "c", "0", "COUNT", "1000"}, other.get()), "*2\r\n" + Bulk("0") + "*0\r\n");
    EXPECT_EQ(t_.Run({"CINFO", "c"}, other.get()).find("$10\r\nlive_items\r\n:0\r\n") != std::string::npos, true);
    EXPECT_EQ(Run({"CSETTTL", "c", "OFF"}), kOk);
    for (const auto& id : ids) EXPECT_EQ(t_.Run({"IPTTL", "c", id}, other.get()), Int(-1)) << id;
    EXPECT_EQ(Run({"CSETTTL", "c", "60"}), kOk);
    for (const auto& id : ids) EXPECT_EQ(t_.Run({"IPTTL", "c", id}, other.get()), Int(10'000)) << id;
    EXPECT_EQ(t_.Run({"ICOUNT", "c"}, other.get()), Int(16));
  }
  EXPECT_EQ(Run({"CSETTTL", "c", "50"}), kOk);
  for (const auto& id : ids) EXPECT_EQ(t_.Run({"IPTTL", "c", id}, other.get()), Int(-2)) << id;
  EXPECT_EQ(Run({"CSETTTL", "c", "OFF"}), kOk);
  EXPECT_EQ(t_.Run({"ICOUNT", "c"}, other.get()), Int(0));  // met expired by the reads: reclaimed
  for (const auto& id : ids) Put("c", id, "{}");
  // Pipelined in one batch on the other session: the set applies to the reads after it.
  Advance(50'000);
  std::string out = t_.RunBatch({{"CSETTTL", "c", "40"}, {"IGET", "c", "i3"}, {"CSETTTL", "c", "60"}, {"IPTTL", "c", "i4"}},
                                other.get());
  EXPECT_EQ(out, kOk + kNil + kOk + Int(10'000));
}

// ---- ISCAN ----

TEST_P(ContainerCommandsTest, IScanReturnsEveryLiveItemOnce) {
  EXPECT_EQ(Run({"ISCAN", "missing", "0"}), "*2\r\n" + Bulk("0") + "*0\r\n");
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  std::set<std::string> live;
  std::map<std::string, std::string> etags;
  for (int i = 0; i < 300; ++i) {
    std::string id = (i % 3 == 0 ? "a" : "b") + std::to_string(i);
    std::string body = i % 4 == 0 ? "{\"ttl\":5}" : i % 4 == 1 ? "{\"ttl\":-1}" : "{\"n\":" + std::to_string(i) + "}";
    etags[id] = Put("c", id, body);
    if (i % 4 != 0) live.insert(id);
  }
  Put("other", "a0", "{}");
  Advance(5'000);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"COUNT", "1"}, {"COUNT", "7"}, {"count", "1000"}}) {
    std::vector<std::string> docs = ScanAll("c", extra);
    std::multiset<std::string> ids;
    for (const auto& d : docs) {
      std::string id = IdOf(d);
      ids.insert(id);
      EXPECT_NE(d.find(etags[id]), std::string::npos) << d;
    }
    EXPECT_EQ(ids.size(), live.size());  // each once: nothing changed during the iteration
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), live);
  }
  // MATCH filters on the id.
  std::set<std::string> want_a;
  for (const auto& id : live) {
    if (id[0] == 'a') want_a.insert(id);
  }
  std::set<std::string> got_a;
  for (const auto& d : ScanAll("c", {"MATCH", "a*", "COUNT", "5"})) got_a.insert(IdOf(d));
  EXPECT_EQ(got_a, want_a);
  std::set<std::string> got_one;
  for (const auto& d : ScanAll("c", {"match", "b10"})) got_one.insert(IdOf(d));
  EXPECT_EQ(got_one, std::set<std::string>{"b10"});
  EXPECT_TRUE(ScanAll("c", {"MATCH", "zzz*"}).empty());
  // Expired items never appear, OFF brings them back.
  Advance(5'000);  // the default's items expire
  std::set<std::string> pinned;
  for (const auto& d : ScanAll("c", {"COUNT", "3"})) pinned.insert(IdOf(d));
  EXPECT_EQ(pinned.size(), 75u);
  EXPECT_EQ(Run({"CSETTTL", "c", "OFF"}), kOk);
  EXPECT_EQ(ScanAll("c").size(), 300u);
  // Errors.
  EXPECT_EQ(Run({"ISCAN", "c", "abc"}), Err("ERR invalid cursor"));
  EXPECT_EQ(Run({"ISCAN", "c", "-1"}), Err("ERR invalid cursor"));
  EXPECT_EQ(Run({"ISCAN", "c", "0", "COUNT"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"ISCAN", "c", "0", "COUNT", "0"}), Err("ERR syntax error"));
  EXPECT_EQ(Run({"ISCAN", "c", "0", "COUNT", "x"}), Err("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"ISCAN", "c", "0", "FOO", "1"}), Err("ERR syntax error"));
  // A huge COUNT is just "everything".
  std::string reply = Run({"ISCAN", "c", "0", "COUNT", "9223372036854775807"});
  Resp r = ParseResp(reply);
  ASSERT_EQ(r.elems.size(), 2u);
  EXPECT_EQ(r.elems[0].str, "0");
  EXPECT_EQ(r.elems[1].elems.size(), 300u);
}

TEST_P(ContainerCommandsTest, IScanSurvivesWritesDuringIteration) {
  // Items present for the whole iteration are returned at least once.
  std::set<std::string> stable;
  for (int i = 0; i < 200; ++i) {
    Put("c", "s" + std::to_string(i), "{}");
    stable.insert("s" + std::to_string(i));
  }
  std::set<std::string> seen;
  std::string cursor = "0";
  int n = 0;
  do {
    Resp r = ParseResp(Run({"ISCAN", "c", cursor, "COUNT", "10"}));
    ASSERT_EQ(r.elems.size(), 2u);
    for (auto& d : r.elems[1].elems) seen.insert(IdOf(d.str));
    cursor = r.elems[0].str;
    for (int k = 0; k < 20; ++k) Put("c", "n" + std::to_string(n++), "{}");  // grows the tables
  } while (cursor != "0");
  for (const auto& id : stable) EXPECT_EQ(seen.count(id), 1u) << id;
}

// ---- Namespaces ----

TEST_P(ContainerCommandsTest, ContainersAreNotKeys) {
  Put("c", "a", "{}");
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  EXPECT_EQ(Run({"KEYS", "*"}), "*0\r\n");
  EXPECT_EQ(Run({"GET", "c"}), kNil);
  EXPECT_EQ(Run({"EXISTS", "c", "a"}), Int(0));
  EXPECT_EQ(Run({"SCAN", "0"}), "*2\r\n" + Bulk("0") + "*0\r\n");
  EXPECT_EQ(Run({"SET", "c", "v"}), kOk);
  EXPECT_EQ(Run({"DEL", "c"}), Int(1));
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
  // Containers belong to a database: another database neither sees them nor flushes them...
  EXPECT_EQ(Run({"SELECT", "1"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(0));
  EXPECT_EQ(Run({"FLUSHDB"}), kOk);
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
  // ...and FLUSHDB in their own removes them with the keys.
  EXPECT_EQ(Run({"FLUSHDB"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(0));
  EXPECT_EQ(Run({"CLIST"}), "*0\r\n");
}

TEST_P(ContainerCommandsTest, FlushAllRemovesContainers) {
  EXPECT_EQ(Run({"CSETTTL", "c", "10"}), kOk);
  Put("c", "a", "{}");
  Put("d", "b", "{\"ttl\":5}");
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"FLUSHALL"}), kOk);
  EXPECT_EQ(Run({"CLIST"}), "*0\r\n");
  EXPECT_EQ(Run({"IGET", "c", "a"}), kNil);
  EXPECT_EQ(Run({"IGET", "d", "b"}), kNil);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(0));
  EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  Put("c", "a", "{}");
  EXPECT_EQ(Run({"CGETTTL", "c"}), kNil);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
  Advance(100'000);
  EXPECT_EQ(Run({"DEBUG", "SET-ACTIVE-EXPIRE", "1"}), kOk);
  EXPECT_EQ(Run({"ICOUNT", "c"}), Int(1));
}

INSTANTIATE_TEST_SUITE_P(Threads, ContainerCommandsTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace lapse::server::testing
