// File: tests/engine/item_json_test.cc
//
// Item bodies: what ItemJsonParser accepts and rejects, and that what it keeps is exactly the
// text the client wrote. A body without "id" and without whitespace between its members comes
// back from RenderItem as {"id":…,<the body's members verbatim>,"_ts":…,"_etag":…}, so the
// round trip is checked byte for byte.

#include "engine/item_json.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/container.h"

namespace lapse::engine {
namespace {

constexpr int64_t kTs = 1700000000;
constexpr uint64_t kEtag = 0x0001000000000abcULL;

struct Outcome {
  ItemJsonError error;
  ParsedItem item;
  std::string detail;
};

Outcome ParseBody(std::string_view id, std::string_view json) {
  static ItemJsonParser parser;  // reused between calls, as the shards do
  Outcome o;
  o.item.ttl = 12345;  // must be overwritten on success
  o.error = parser.Parse(id, json, &o.item, &o.detail);
  return o;
}

std::string Render(std::string_view id, std::string_view members) {
  std::string out = "garbage that must be cleared";
  RenderItem(id, members, kTs, kEtag, &out);
  return out;
}

// The rendering of a body `{<members>}` of item `id`.
std::string Expected(std::string_view id_literal, std::string_view members) {
  std::string s = "{\"id\":" + std::string(id_literal);
  if (!members.empty()) s += "," + std::string(members);
  s += ",\"_ts\":1700000000,\"_etag\":\"0001000000000abc\"}";
  return s;
}

// Parses `{members}` and checks the members and the rendering come back verbatim.
void ExpectRoundTrip(std::string_view members) {
  SCOPED_TRACE(std::string(members));
  std::string body = "{" + std::string(members) + "}";
  Outcome o = ParseBody("x", body);
  ASSERT_EQ(o.error, ItemJsonError::kNone) << o.detail;
  EXPECT_EQ(o.item.members, members);
  EXPECT_EQ(Render("x", o.item.members), Expected("\"x\"", members));
}

TEST(ItemJsonTest, ValidBodiesRoundTripExactly) {
  ExpectRoundTrip("");
  ExpectRoundTrip(R"("a":1)");
  ExpectRoundTrip(R"("name":"caf\u00e9 \u65e5\u672c","raw":"café 日本 😀")");
  ExpectRoundTrip(R"("k\"q":"v\"q","back\\slash":"\\","ctl":"\n\t\r\b\f\/")");
  ExpectRoundTrip(R"("surrogate":"\ud83d\ude00","\u0041key":"\u0000")");
  ExpectRoundTrip(R"("n":{"a":[1,2,{"b":[[],{}]}],"c":{"d":{"e":null}}},"arr":[true,false,null,"]}"])");
  ExpectRoundTrip(R"("a":1e3,"b":-0,"c":1.5E-7,"d":-0.0,"e":123456789012345678901234567890.5,"f":1E+2)");
  ExpectRoundTrip(R"("z":1,"a":2,"m":3,"b":4)");  // key order preserved, not sorted
  ExpectRoundTrip(R"("inner":{"dup":1,"dup":2})");  // only top-level duplicates are refused
  // Numbers simdjson cannot hold are still JSON, and kept as written.
  ExpectRoundTrip(R"("big":99999999999999999999,"huge":1e400,"neg":-123456789012345678901234567890,"deep":[1e999])");
  ExpectRoundTrip(R"("s":"with, comma } and ] brackets { [ and : colon")");
  ExpectRoundTrip(R"("ttl":5,"after":"x")");
  ExpectRoundTrip(R"("a" : 1,"b"	:	[ 1 , 2 ])");  // whitespace inside a member is kept
}

TEST(ItemJsonTest, WhitespaceBetweenMembersIsDroppedButMembersAreKept) {
  Outcome o = ParseBody("x", " \n\t{ \"a\" : 1 ,\n  \"b\":[ 2 ]\r\n, \"c\":\"d\"  }\n ");
  ASSERT_EQ(o.error, ItemJsonError::kNone) << o.detail;
  EXPECT_EQ(o.item.members, "\"a\" : 1,\"b\":[ 2 ],\"c\":\"d\"");
  EXPECT_EQ(o.item.ttl, kNoItemTtl);
  o = ParseBody("x", "{ }");
  ASSERT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(o.item.members, "");
  EXPECT_EQ(Render("x", o.item.members), Expected("\"x\"", ""));
}

TEST(ItemJsonTest, IdIsCheckedRemovedAndRenderedFirst) {
  // Missing id: fine.
  Outcome o = ParseBody("a", R"({"v":1})");
  ASSERT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(o.item.members, R"("v":1)");
  // Matching id anywhere: removed from the members, rendered first.
  o = ParseBody("a", R"({"v":1,"id":"a","w":2})");
  ASSERT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(o.item.members, R"("v":1,"w":2)");
  EXPECT_EQ(Render("a", o.item.members), Expected("\"a\"", R"("v":1,"w":2)"));
  // The id compares as a JSON string, escapes decoded: "\u0061" is "a"; an escaped key too.
  o = ParseBody("a", R"({"id":"\u0061"})");
  EXPECT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(o.item.members, "");
  o = ParseBody("a", R"({"\u0069d":"a","v":2})");
  EXPECT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(o.item.members, R"("v":2)");
  o = ParseBody("caf\xc3\xa9", R"({"id":"caf\u00e9"})");
  EXPECT_EQ(o.error, ItemJsonError::kNone);
  o = ParseBody("q\"b", R"({"id":"q\"b"})");
  EXPECT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(Render("q\"b", o.item.members), Expected(R"("q\"b")", ""));

  // Mismatches: another string, a non-string, a second id.
  for (const char* body : {R"({"id":"b"})", R"({"id":"A"})", R"({"id":"a "})", R"({"id":1})", R"({"id":null})",
                           R"({"id":["a"]})", R"({"id":{"a":1}})", R"({"id":true})"}) {
    SCOPED_TRACE(body);
    EXPECT_EQ(ParseBody("a", body).error, ItemJsonError::kIdMismatch);
  }
  // A second id, even an equal one, is a duplicate property.
  for (const char* body : {R"({"id":"a","id":"a"})", R"({"id":"a","id":"b"})"}) {
    SCOPED_TRACE(body);
    Outcome o = ParseBody("a", body);
    EXPECT_EQ(o.error, ItemJsonError::kDuplicateProperty);
    EXPECT_EQ(o.detail, "id");
  }
  EXPECT_EQ(ParseBody("1", R"({"id":1})").error, ItemJsonError::kIdMismatch);
}

TEST(ItemJsonTest, RenderedItemBytesIsTheRenderedLength) {
  for (std::string_view id : {"a", "q\"b", "a\x01" "b\tc", "x\\y", "日本", ""}) {
    for (std::string_view members : {"", R"("v":1)", R"("s":"text","n":[1,2]})"}) {
      for (int64_t ts : {int64_t{0}, int64_t{7}, int64_t{1700000000}, int64_t{99999999999}}) {
        std::string out;
        RenderItem(id, members, ts, 0x1234, &out);
        EXPECT_EQ(RenderedItemBytes(id, members.size(), ts), out.size()) << id << " " << members << " " << ts;
      }
    }
  }
}

TEST(ItemJsonTest, RenderEscapesTheId) {
  EXPECT_EQ(Render("a\x01" "b\tc", R"("v":1)"), Expected(R"("a\u0001b\u0009c")", R"("v":1)"));
  EXPECT_EQ(Render("x\\y", ""), Expected(R"("x\\y")", ""));  // not a valid item id, but rendered safely
  EXPECT_EQ(Render("日本", ""), Expected("\"日本\"", ""));
}

TEST(ItemJsonTest, ClientTsAndEtagAreDropped) {
  Outcome o = ParseBody("a", R"({"_ts":1,"v":1,"_etag":"\"00000\"","_ts":"x","w":{"_ts":2}})");
  ASSERT_EQ(o.error, ItemJsonError::kNone);
  // Only the top-level server properties go; nested ones are the client's data.
  EXPECT_EQ(o.item.members, R"("v":1,"w":{"_ts":2})");
  EXPECT_EQ(Render("a", o.item.members), Expected("\"a\"", R"("v":1,"w":{"_ts":2})"));
  o = ParseBody("a", R"({"_etag":null})");
  ASSERT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(o.item.members, "");
  // Other underscore properties are the client's.
  o = ParseBody("a", R"({"_rid":"r","_self":1,"_attachments":"a"})");
  ASSERT_EQ(o.error, ItemJsonError::kNone);
  EXPECT_EQ(o.item.members, R"("_rid":"r","_self":1,"_attachments":"a")");
}

TEST(ItemJsonTest, ValidTtlsAreKeptAsWritten) {
  struct Case {
    const char* body;
    int64_t ttl;
    const char* members;
  } cases[] = {
      {R"({"ttl":-1})", -1, R"("ttl":-1)"},
      {R"({"ttl":1})", 1, R"("ttl":1)"},
      {R"({"ttl":2147483647})", 2147483647, R"("ttl":2147483647)"},
      {R"({"a":1,"ttl" : 60 ,"b":2})", 60, R"("a":1,"ttl" : 60,"b":2)"},
      {R"({"t\u0074l":30})", 30, R"("t\u0074l":30)"},  // the key "ttl", escaped
      {R"({"TTL":"x","Ttl":0})", kNoItemTtl, R"("TTL":"x","Ttl":0)"},  // keys are case-sensitive
      {R"({"x":{"ttl":0}})", kNoItemTtl, R"("x":{"ttl":0})"},        // only the top-level ttl counts
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    Outcome o = ParseBody("a", c.body);
    ASSERT_EQ(o.error, ItemJsonError::kNone) << o.detail;
    EXPECT_EQ(o.item.ttl, c.ttl);
    EXPECT_EQ(o.item.members, c.members);
  }
}

TEST(ItemJsonTest, InvalidTtlsAreRejectedWithTheRawText) {
  const char* values[] = {"0",    "-2",   "null",  "1.5", "\"10\"", "true", "false", "2147483648",
                          "1e3",  "-0",   "10.0",  "[]",  "{}",     "[1]",  "-1.0",  "1E3",
                          "-2147483648", "9223372036854775807", "18446744073709551615", "-9223372036854775808",
                          "\"-1\"", "{\"a\":[1, 2]}", "4294967296"};
  for (const char* v : values) {
    SCOPED_TRACE(v);
    std::string body = std::string(R"({"a":1,"ttl":)") + v + R"(,"b":2})";
    Outcome o = ParseBody("a", body);
    EXPECT_EQ(o.error, ItemJsonError::kInvalidTtl);
    EXPECT_EQ(o.detail, v);
    // Whitespace around the value is not part of it.
    body = std::string("{ \"ttl\" :\t ") + v + " \n}";
    o = ParseBody("a", body);
    EXPECT_EQ(o.error, ItemJsonError::kInvalidTtl);
    EXPECT_EQ(o.detail, v);
  }
  // Out of range for simdjson as well as for the rule: still the ttl error, with the text.
  for (const char* v : {"99999999999999999999", "-9223372036854775809", "1e400", "-1e400"}) {
    SCOPED_TRACE(v);
    Outcome o = ParseBody("a", std::string("{\"a\":1,\"ttl\":") + v + "}");
    EXPECT_EQ(o.error, ItemJsonError::kInvalidTtl);
    EXPECT_EQ(o.detail, v);
  }
  // A second ttl is a duplicate property, even when both are valid.
  Outcome o = ParseBody("a", R"({"ttl":5,"ttl":6})");
  EXPECT_EQ(o.error, ItemJsonError::kDuplicateProperty);
  EXPECT_EQ(o.detail, "ttl");
}

TEST(ItemJsonTest, DuplicatePropertiesAreRefusedButClientTsAndEtagAreFree) {
  for (const char* body : {R"({"a":1,"a":1})", R"({"a":1,"b":2,"a":{}})", R"({"\u0061":1,"a":2})"}) {
    SCOPED_TRACE(body);
    Outcome o = ParseBody("x", body);
    EXPECT_EQ(o.error, ItemJsonError::kDuplicateProperty);
    EXPECT_EQ(o.detail, "a");
  }
  EXPECT_EQ(ParseBody("x", R"({"_ts":1,"_ts":2,"_etag":"a","_etag":"b"})").error, ItemJsonError::kNone);
}

TEST(ItemJsonTest, MalformedNumbersStayInvalidJson) {
  // The stand-in used for numbers simdjson cannot hold must not make bad numbers pass.
  for (const char* body : {R"({"a":01})", R"({"a":1.})", R"({"a":.5})", R"({"a":1e})", R"({"a":--1})", R"({"a":1e400x})",
                           R"({"a":99999999999999999999.})", R"({"a":+1})", R"({"a":-})", R"({"a":1e400,})"}) {
    SCOPED_TRACE(body);
    EXPECT_EQ(ParseBody("x", body).error, ItemJsonError::kInvalidJson);
  }
}

TEST(ItemJsonTest, InvalidJsonAndNonObjects) {
  for (const char* body : {"", " ", "{", "}", "{\"a\":}", "{\"a\":1,}", "{\"a\" 1}", "{'a':1}", "{a:1}",
                           "{\"a\":1}}", "{\"a\":1} x", "{\"a\":01}", "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}",
                           "{\"a\":tru}", "{\"a\":NaN}", "{\"a\":\"\\x\"}", "{\"a\":1}{\"b\":2}"}) {
    SCOPED_TRACE(body);
    Outcome o = ParseBody("a", body);
    EXPECT_EQ(o.error, ItemJsonError::kInvalidJson);
    EXPECT_FALSE(o.detail.empty());
  }
  for (const char* body : {"[]", "[{\"id\":\"a\"}]", "\"a\"", "1", "-0", "null", "true", " \"{}\" "}) {
    SCOPED_TRACE(body);
    EXPECT_EQ(ParseBody("a", body).error, ItemJsonError::kNotObject);
  }
}

TEST(ItemJsonTest, SizeLimit) {
  // Exactly 2 MiB is accepted; one byte more is not (checked before parsing).
  std::string body = "{\"a\":\"";
  body.append(kMaxItemBytes - body.size() - 2, 'x');
  body += "\"}";
  ASSERT_EQ(body.size(), kMaxItemBytes);
  Outcome o = ParseBody("a", body);
  ASSERT_EQ(o.error, ItemJsonError::kNone) << o.detail;
  EXPECT_EQ(o.item.members.size(), kMaxItemBytes - 2);
  body.insert(body.size() - 2, "x");
  EXPECT_EQ(ParseBody("a", body).error, ItemJsonError::kTooLarge);
  EXPECT_EQ(ParseBody("a", std::string(kMaxItemBytes + 1, ' ')).error, ItemJsonError::kTooLarge);
}

TEST(ItemJsonTest, InvalidIds) {
  EXPECT_TRUE(ValidItemId("a"));
  EXPECT_TRUE(ValidItemId(std::string(255, 'x')));
  EXPECT_TRUE(ValidItemId("caf\xc3\xa9 日本 😀"));
  EXPECT_TRUE(ValidItemId("with space.and-dash_and*star"));
  const std::string bad[] = {"", std::string(256, 'x'), "a/b", "a\\b", "a?b", "a#b", "/", "\xff",
                             "a\xc3", "\xc0\xaf", "\xed\xa0\x80" /* surrogate */, "x\xf4\x90\x80\x80"};
  for (const auto& id : bad) {
    SCOPED_TRACE(id);
    EXPECT_FALSE(ValidItemId(id));
    // The id is checked first, even for an otherwise valid body.
    EXPECT_EQ(ParseBody(id, "{}").error, ItemJsonError::kInvalidId);
  }
  // 255 bytes of multibyte UTF-8 is fine; 256 is not, whatever the character count.
  std::string e255;
  for (int i = 0; i < 85; ++i) e255 += "\xe6\x97\xa5";
  ASSERT_EQ(e255.size(), 255u);
  EXPECT_TRUE(ValidItemId(e255));
  EXPECT_FALSE(ValidItemId(e255 + "x"));
  EXPECT_EQ(ParseBody(std::string(256, 'x'), "{}").error, ItemJsonError::kInvalidId);
}

TEST(ItemJsonTest, ParserIsReusableAfterErrors) {
  ItemJsonParser parser;
  ParsedItem item;
  std::string detail;
  EXPECT_EQ(parser.Parse("a", "{\"ttl\":0}", &item, &detail), ItemJsonError::kInvalidTtl);
  EXPECT_EQ(parser.Parse("a", "{", &item, &detail), ItemJsonError::kInvalidJson);
  ASSERT_EQ(parser.Parse("a", "{\"ttl\":7,\"v\":\"w\"}", &item, &detail), ItemJsonError::kNone);
  EXPECT_EQ(item.ttl, 7);
  EXPECT_EQ(item.members, "\"ttl\":7,\"v\":\"w\"");
  ASSERT_EQ(parser.Parse("a", "{}", &item, &detail), ItemJsonError::kNone);
  EXPECT_EQ(item.ttl, kNoItemTtl);
  EXPECT_EQ(item.members, "");
}

TEST(ItemJsonTest, EtagText) {
  EXPECT_EQ(EtagText(0), "0000000000000000");
  EXPECT_EQ(EtagText(0x0123456789abcdefULL), "0123456789abcdef");
  EXPECT_EQ(EtagText(~0ULL), "ffffffffffffffff");
}

TEST(ItemJsonTest, ParseTtlSecondsIsCosmosStrict) {
  int64_t v = 0;
  EXPECT_TRUE(ParseTtlSeconds("-1", &v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(ParseTtlSeconds("1", &v));
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(ParseTtlSeconds("2147483647", &v));
  EXPECT_EQ(v, 2147483647);
  for (const char* s : {"", "0", "-0", "-2", "+1", "01", " 1", "1 ", "1.5", "1e3", "2147483648", "9999999999",
                        "99999999999", "abc", "OFF", "-", "--1", "-01", "10.0", "0x10"}) {
    SCOPED_TRACE(s);
    v = 777;
    EXPECT_FALSE(ParseTtlSeconds(s, &v));
    EXPECT_EQ(v, 777);
  }
}

TEST(ItemJsonTest, EffectiveTtlMatrix) {
  const int64_t m = 7, n = 10;
  // OFF: never, whatever the item says.
  EXPECT_EQ(EffectiveTtl(kTtlOff, kNoItemTtl), std::nullopt);
  EXPECT_EQ(EffectiveTtl(kTtlOff, -1), std::nullopt);
  EXPECT_EQ(EffectiveTtl(kTtlOff, m), std::nullopt);
  // -1: only an item's own ttl.
  EXPECT_EQ(EffectiveTtl(-1, kNoItemTtl), std::nullopt);
  EXPECT_EQ(EffectiveTtl(-1, -1), std::nullopt);
  EXPECT_EQ(EffectiveTtl(-1, m), m);
  // n: the default unless the item overrides it.
  EXPECT_EQ(EffectiveTtl(n, kNoItemTtl), n);
  EXPECT_EQ(EffectiveTtl(n, -1), std::nullopt);
  EXPECT_EQ(EffectiveTtl(n, m), m);
  EXPECT_EQ(EffectiveTtl(n, 100), 100);
}

}  // namespace
}  // namespace lapse::engine
