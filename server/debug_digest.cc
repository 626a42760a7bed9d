// File: server/debug_digest.cc
//
// DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis 7.0's signatures of the dataset and of single
// values, so that a test suite can tell whether two servers, or one server before and after a
// restart, hold the same data. The digests are Redis's own, so lapse and redis-server holding
// the same data give the same hex (checked against redis-server 7.0.15 for every type):
//   - xor(d, b) XORs SHA-1(b) into d; mix(d, b) does that, then replaces d by SHA-1(d). A
//     mix depends on order, a xor does not: lists and stream entries are mixed in order,
//     set members and hash or sorted-set elements xored in whatever order they lie.
//   - A value: mix its Redis type number (4 bytes, big-endian), then its contents by type,
//     then, when the key has a TTL, xor "!!expire!!".
//   - The dataset: for each database that has keys, mix its number; then, for each key, xor
//     in the value's digest started from mix(zero, key).
// Redis also counts keys already expired but not yet reclaimed; lapse sees only live keys,
// as every read does. A hash field past its TTL (lapse's HEXPIRE) is left out likewise.
#include "server/debug_digest.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

#include "engine/collection.h"
#include "engine/list.h"
#include "engine/shard.h"
#include "engine/stream.h"
#include "engine/zset.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/server.h"
#include "server/sha1.h"

namespace lapse::server {

namespace {

using Digest = std::array<unsigned char, 20>;

std::string_view AsBytes(const Digest& d) { return {reinterpret_cast<const char*>(d.data()), d.size()}; }

void Xor(Digest& d, std::string_view bytes) {
  Digest h = Sha1(bytes);
  for (size_t i = 0; i < d.size(); ++i) d[i] ^= h[i];
}

void Mix(Digest& d, std::string_view bytes) {
  Xor(d, bytes);
  d = Sha1(AsBytes(d));
}

void MixBigEndian32(Digest& d, uint32_t n) {
  const char bytes[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                         static_cast<char>(n)};
  Mix(d, std::string_view(bytes, 4));
}

// Redis's OBJ_* numbers, which its digest mixes in.
uint32_t RedisTypeNumber(engine::ValueType type) {
  switch (type) {
    case engine::ValueType::kString: return 0;
    case engine::ValueType::kList: return 1;
    case engine::ValueType::kSet: return 2;
    case engine::ValueType::kZSet: return 3;
    case engine::ValueType::kHash: return 4;
    case engine::ValueType::kStream: return 6;
  }
  return 0;
}

// Two strings mixed into a fresh digest, which is then xored in: one hash or sorted-set
// element.
void XorPair(Digest& d, std::string_view first, std::string_view second) {
  Digest element{};
  Mix(element, first);
  Mix(element, second);
  Xor(d, AsBytes(element));
}

void MixValue(Digest& d, const engine::Entry& e, int64_t now_ms) {
  MixBigEndian32(d, RedisTypeNumber(e.type()));
  switch (e.type()) {
    case engine::ValueType::kString:
      Mix(d, e.value());  // an integer is kept as its text, which is what Redis mixes
      break;
    case engine::ValueType::kList:
      engine::list::ForEach(&e, [&](std::string_view element) { Mix(d, element); });
      break;
    case engine::ValueType::kSet:
      engine::set::ForEach(&e, [&](std::string_view member) { Xor(d, member); });
      break;
    case engine::ValueType::kZSet:
      engine::zset::ForEach(&e, [&](std::string_view member, double score) {
        char text[64];
        int n = std::snprintf(text, sizeof text, "%.17g", score);  // Redis 7.0's form here
        XorPair(d, member, std::string_view(text, static_cast<size_t>(n)));
      });
      break;
    case engine::ValueType::kHash:
      engine::hash::ForEach(&e, [&](std::string_view field, std::string_view value) {
        int64_t deadline = engine::hash::FieldDeadline(&e, field);
        if (deadline > 0 && deadline <= now_ms) return;
        XorPair(d, field, value);
      });
      break;
    case engine::ValueType::kStream: {
      constexpr uint64_t kMax = ~uint64_t{0};
      engine::stream::Of(&e).Range(
          engine::StreamId{0, 0}, engine::StreamId{kMax, kMax}, false,
          [&](engine::StreamId id, std::span<const std::string_view> field_values) {
            Mix(d, std::to_string(id.ms) + "." + std::to_string(id.seq));
            for (std::string_view part : field_values) Mix(d, part);
            return true;
          });
      break;
    }
  }
  if (e.deadline() != engine::kNoDeadline) Xor(d, "!!expire!!");
}

}  // namespace

void ReplyValueDigests(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  c.reply.ArrayHeader(c.args.size() - 2);
  for (size_t i = 2; i < c.args.size(); ++i) {
    Digest d{};
    shards.WithShard(shards.ShardFor(c.args[i]), [&](engine::Shard& shard) {
      if (const engine::Entry* e = shard.db(c.session.db).Find(c.args[i], now)) MixValue(d, *e, now);
    });
    c.reply.SimpleString(LowerHex(d));
  }
}

void ReplyDatasetDigest(ConnCommand& c) {
  ShardSet& shards = c.server.shards();
  int64_t now = c.server.clock().NowMs();
  std::vector<uint32_t> all(shards.size());
  for (uint32_t id = 0; id < all.size(); ++id) all[id] = id;
  // Per database, the xor of its keys' digests: the order of the keys does not matter, so
  // each shard adds its own, all of them held at once so that the digest is one moment's.
  std::vector<Digest> per_db;
  std::vector<bool> has_keys;
  shards.RunHolding(all, [&] {
    for (uint32_t id : all) {
      engine::Shard& shard = shards.shard(id);
      per_db.resize(shard.database_count(), Digest{});
      has_keys.resize(shard.database_count(), false);
      for (size_t db = 0; db < shard.database_count(); ++db) {
        uint64_t cursor = 0;
        do {
          cursor = shard.db(db).Scan(cursor, now, [&](const engine::Entry* e) {
            Digest key_digest{};
            Mix(key_digest, e->key());
            MixValue(key_digest, *e, now);
            Xor(per_db[db], AsBytes(key_digest));
            has_keys[db] = true;
          });
        } while (cursor != 0);
      }
    }
  });
  Digest final_digest{};
  for (size_t db = 0; db < per_db.size(); ++db) {
    if (!has_keys[db]) continue;
    MixBigEndian32(final_digest, static_cast<uint32_t>(db));
    for (size_t i = 0; i < final_digest.size(); ++i) final_digest[i] ^= per_db[db][i];
  }
  c.reply.SimpleString(LowerHex(final_digest));
}

}  // namespace lapse::server
