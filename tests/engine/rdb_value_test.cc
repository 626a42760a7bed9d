// RDB values (engine/rdb_value.h): every type in every layout lapse has is written with the
// type byte Redis 7.0 would choose and reads back identical, with the same layout; the
// packed encodings (listpack, ziplist, intset, zipmap) decode bytes as Redis writes them; LZF
// round-trips; malformed values are refused without crashing.
#include "engine/rdb_value.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/db.h"
#include "engine/list.h"
#include "engine/rdb_packed.h"
#include "engine/stream.h"
#include "engine/zset.h"

namespace lapse::engine::rdb {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

// Writes `e`, reads it back into a fresh Db under the same key; checks the type byte.
Entry* RoundTrip(const Entry* e, Db& into, uint8_t expected_type, bool compress = true) {
  std::string bytes;
  AppendValue(bytes, e, compress);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), expected_type);
  Reader r(bytes);
  uint8_t type = *r.Byte();
  std::string error;
  Entry* back = ReadValue(r, type, into, e->key(), CollectionLimits{}, kNow, &error);
  EXPECT_EQ(error, "");
  EXPECT_TRUE(r.AtEnd());
  return back;
}

std::map<std::string, std::string> HashContents(const Entry* e) {
  std::map<std::string, std::string> out;
  hash::ForEach(e, [&](std::string_view f, std::string_view v) { out[std::string(f)] = v; });
  return out;
}

std::set<std::string> SetContents(const Entry* e) {
  std::set<std::string> out;
  set::ForEach(e, [&](std::string_view m) { out.emplace(m); });
  return out;
}

std::vector<std::string> ListContents(const Entry* e) {
  std::vector<std::string> out;
  list::ForEach(e, [&](std::string_view m) { out.emplace_back(m); });
  return out;
}

std::vector<std::pair<std::string, double>> ZSetContents(const Entry* e) {
  std::vector<std::pair<std::string, double>> out;
  zset::ForEach(e, [&](std::string_view m, double s) { out.emplace_back(m, s); });
  return out;
}

TEST(RdbValueTest, StringsInEveryForm) {
  Db db(kNow), back(kNow);
  for (std::string value : {std::string("hello"), std::string("12345"), std::string("-7"), std::string("4294967296"),
                            std::string(100, 'a'), std::string("0123"), std::string()}) {
    Entry* e = db.Put("k", value, ValueType::kString, kNoDeadline, kNow);
    Entry* got = RoundTrip(e, back, kTypeString);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->value(), value);
  }
  // A compressible string is written shorter with compression than without.
  Entry* e = db.Put("k", std::string(100, 'a'), ValueType::kString, kNoDeadline, kNow);
  std::string packed, raw;
  AppendValue(packed, e, true);
  AppendValue(raw, e, false);
  EXPECT_LT(packed.size(), raw.size());
}

TEST(RdbValueTest, LzfRoundTripsRandomAndRepetitiveData) {
  std::mt19937_64 rng(7);
  for (size_t n : {21u, 100u, 5000u, 70000u}) {
    std::string text;
    while (text.size() < n) text += rng() % 3 ? "lapse:" : std::to_string(rng() % 100);
    text.resize(n);
    auto packed = LzfCompress(text);
    ASSERT_TRUE(packed) << n;
    EXPECT_EQ(LzfDecompress(*packed, text.size()), text);
  }
  std::string noise;
  for (int k = 0; k < 64; ++k) noise.push_back(static_cast<char>(rng()));
  if (auto packed = LzfCompress(noise)) {
    EXPECT_EQ(LzfDecompress(*packed, noise.size()), noise);
  }
}

TEST(RdbValueTest, HashesPackedAndTable) {
  Db db(kNow), back(kNow);
  CollectionLimits limits;
  for (size_t n : {3u, 500u}) {
    Entry* e = hash::Create(db, "h", kNow);
    for (size_t k = 0; k < n; ++k) hash::Set(db, e, "f" + std::to_string(k), k % 2 ? "v" : std::to_string(k), limits);
    Entry* got = RoundTrip(e, back, n == 3 ? kTypeHashListpack : kTypeHash);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(HashContents(got), HashContents(e));
    EXPECT_EQ(got->collection_encoding(), e->collection_encoding());
  }
}

TEST(RdbValueTest, SetsIntsetStringsAndTable) {
  Db db(kNow), back(kNow);
  CollectionLimits limits;
  struct Case {
    std::vector<std::string> members;
    uint8_t type;
  };
  std::vector<std::string> big_ints, big_strings;
  for (int k = 0; k < 1000; ++k) big_ints.push_back(std::to_string(k * 1000003LL - 70000));
  for (int k = 0; k < 300; ++k) big_strings.push_back("m" + std::to_string(k));
  for (const Case& c : {Case{{"1", "-5", "70000", "9000000000"}, kTypeSetIntset}, Case{{"a", "b", "1"}, kTypeSet},
                        Case{big_ints, kTypeSet}, Case{big_strings, kTypeSet}}) {
    Entry* e = set::Create(db, "s", c.members[0], kNow);
    for (const std::string& m : c.members) set::Add(db, e, m, limits);
    Entry* got = RoundTrip(e, back, c.type);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(SetContents(got), SetContents(e));
    EXPECT_EQ(got->collection_encoding(), e->collection_encoding());
  }
}

TEST(RdbValueTest, ListsSmallAndManyNodes) {
  Db db(kNow), back(kNow);
  CollectionLimits limits;
  for (size_t n : {1u, 5u, 10000u}) {
    Entry* e = list::Create(db, "l", kNow);
    for (size_t k = 0; k < n; ++k) {
      list::Push(db, e, list::End::kTail, k % 3 ? std::to_string(k * 977) : std::string(k % 200, 'x'), limits);
    }
    Entry* got = RoundTrip(e, back, kTypeListQuicklist2);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(ListContents(got), ListContents(e));
  }
}

TEST(RdbValueTest, SortedSetsPackedAndTableWithEveryScoreKind) {
  Db db(kNow), back(kNow);
  CollectionLimits limits;
  std::vector<double> scores = {0, -0.0, 1, -3, 1.5, 1e300, -1e-300, 3.141592653589793, INFINITY, -INFINITY, 1e17};
  for (size_t n : {scores.size(), 400ul}) {
    Entry* e = zset::Create(db, "z", kNow);
    for (size_t k = 0; k < n; ++k) zset::Set(db, e, "m" + std::to_string(k), scores[k % scores.size()] + (k / scores.size()), limits);
    Entry* got = RoundTrip(e, back, n == scores.size() ? kTypeZSetListpack : kTypeZSet2);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(ZSetContents(got), ZSetContents(e));
    EXPECT_EQ(got->collection_encoding(), e->collection_encoding());
  }
}

TEST(RdbValueTest, StreamsWithGroupsConsumersAndPel) {
  Db db(kNow), back(kNow);
  Entry* e = stream::Create(db, "x", kNow);
  Stream& s = stream::Of(e);
  for (uint64_t k = 1; k <= 450; ++k) {
    std::string n = std::to_string(k);
    std::vector<std::string_view> fv = {"f", n, "g", "text"};
    std::vector<std::string_view> other = {"other", n};
    s.Append({1000 + k / 3, k % 3}, k % 7 ? std::span<const std::string_view>(fv) : std::span<const std::string_view>(other));
  }
  s.Delete({1001, 1});
  StreamGroup& g = s.groups()["g1"];
  g.last_id = {1100, 0};
  g.entries_read = 300;
  g.AddConsumer("alice", kNow);
  g.AddConsumer("bob", kNow + 5);
  g.Deliver({1002, 0}, "alice", kNow + 1);
  g.Deliver({1003, 0}, "bob", kNow + 2);
  g.Deliver({1003, 1}, "bob", kNow + 3);
  s.groups()["empty"];
  Entry* got = RoundTrip(e, back, kTypeStreamListpacks2);
  ASSERT_NE(got, nullptr);
  const Stream& t = stream::Of(got);
  EXPECT_EQ(t.length(), s.length());
  EXPECT_EQ(t.last_id(), s.last_id());
  EXPECT_EQ(t.max_deleted_id(), s.max_deleted_id());
  EXPECT_EQ(t.entries_added(), s.entries_added());
  std::vector<std::string> a, b;
  auto collect = [](std::vector<std::string>* out) {
    return [out](StreamId id, std::span<const std::string_view> fv) {
      std::string line = id.ToString();
      for (auto x : fv) line += " " + std::string(x);
      out->push_back(line);
      return true;
    };
  };
  s.Range(StreamId::Min(), StreamId::Max(), false, collect(&a));
  t.Range(StreamId::Min(), StreamId::Max(), false, collect(&b));
  EXPECT_EQ(a, b);
  ASSERT_EQ(t.groups().size(), 2u);
  const StreamGroup& h = t.groups().at("g1");
  EXPECT_EQ(h.last_id, g.last_id);
  EXPECT_EQ(h.entries_read, 300);
  ASSERT_EQ(h.pel.size(), 3u);
  EXPECT_EQ(h.pel.at({1003, 1}).consumer, "bob");
  EXPECT_EQ(h.pel.at({1003, 1}).delivery_time_ms, kNow + 3);
  EXPECT_EQ(h.consumers.at("bob").pending.size(), 2u);
  EXPECT_EQ(h.consumers.at("alice").seen_time_ms, g.consumers.at("alice").seen_time_ms);
  EXPECT_EQ(t.groups().at("empty").entries_read, StreamGroup::kInvalidEntriesRead);
}

TEST(RdbValueTest, DecodesRedisPackedEncodings) {
  // A listpack Redis 7.0 writes for HSET h a 1 bb -4000 (integers in 7 and 13 bits).
  ListpackWriter lp;
  for (auto s : {"a", "1", "bb", "-4000", "70000", "-9000000000"}) lp.Append(s);
  std::vector<std::string> got;
  ASSERT_TRUE(ForEachListpackElement(lp.Finish(), [&](std::string_view e) { return got.emplace_back(e), true; }));
  EXPECT_EQ(got, (std::vector<std::string>{"a", "1", "bb", "-4000", "70000", "-9000000000"}));
  // A ziplist of "a", 5 (immediate), 300 (int16), as Redis 6 writes it.
  const std::string zl("\x15\x00\x00\x00\x10\x00\x00\x00\x03\x00\x00\x01\x61\x03\xf6\x02\xc0\x2c\x01\xff", 20);
  got.clear();
  std::string fixed = zl;
  fixed[0] = static_cast<char>(fixed.size());
  ASSERT_TRUE(ForEachZiplistElement(fixed, [&](std::string_view e) { return got.emplace_back(e), true; }));
  EXPECT_EQ(got, (std::vector<std::string>{"a", "5", "300"}));
  // A zipmap {"f": "vv"} (Redis 2.4).
  const std::string zm("\x01\x01" "f" "\x02\x00" "vv" "\xff", 8);
  got.clear();
  ASSERT_TRUE(ForEachZipmapElement(zm, [&](std::string_view e) { return got.emplace_back(e), true; }));
  EXPECT_EQ(got, (std::vector<std::string>{"f", "vv"}));
  got.clear();
  ASSERT_TRUE(ForEachIntsetMember(BuildIntset({-2, 7, 100000}), [&](std::string_view e) { return got.emplace_back(e), true; }));
  EXPECT_EQ(got, (std::vector<std::string>{"-2", "7", "100000"}));
}

TEST(RdbValueTest, MalformedValuesAreRefused) {
  Db db(kNow);
  std::string error;
  std::vector<std::string> bad = {
      std::string("\x04\x05\x01" "a", 4),        // a hash of 5 pairs, truncated
      std::string("\x10\x03" "abc", 5),           // a listpack that is not one
      std::string("\x0b\x04\x00\x00\x00\x00", 6), // an intset cut short
      std::string("\x13\x01\x10" "short", 8),     // a stream node key of the wrong size
      std::string("\x07\x00", 2),                 // a module value
      std::string("\x2a", 1),                     // no such type
  };
  for (const std::string& bytes : bad) {
    Reader r(bytes);
    uint8_t type = *r.Byte();
    EXPECT_EQ(ReadValue(r, type, db, "k", CollectionLimits{}, kNow, &error), nullptr);
    EXPECT_NE(error, "") << static_cast<int>(type);
  }
}

}  // namespace
}  // namespace lapse::engine::rdb
