// Geo family: GEOADD, GEOPOS, GEODIST, GEOHASH, and the searches GEOSEARCH, GEOSEARCHSTORE,
// GEORADIUS, GEORADIUSBYMEMBER and their read-only _RO forms.
//
// A geo index is an ordinary sorted set (TYPE zset) whose scores are 52-bit geohashes
// (engine/geohash.h), so every sorted-set command reads it and these commands read any
// sorted set. The search itself, the nine cells that cover a shape walked in the set and
// the sort by distance, is the engine's (engine/geo_search.h); this file parses, looks the
// keys up, replies and stores.
//
// Handlers: the reads (GEOPOS, GEODIST, GEOHASH, GEOSEARCH and the _RO forms) and GEOADD
// touch one key and are ShardHandlers. GEOSEARCHSTORE, GEORADIUS and GEORADIUSBYMEMBER may
// store into a key on another shard: they hold the shards of every key they may touch for
// one atomic step, as ZRANGESTORE does. GEORADIUS's destination follows a STORE or
// STOREDIST option anywhere among the options, so its keys are found by a KeyFinder (Redis
// calls such commands "movablekeys"), which transactions use to know their footprint.
//
// Parsing follows Redis 7.0's georadiusGeneric step by step, because the order of its
// checks decides which error a doubly bad command gets: the source's type first, then the
// centre and radius of GEORADIUS*, then the options in order, then the combinations.
// Bad input changes nothing.
//
// Request units as for sorted sets: reads are charged the bytes they return, stores the
// member bytes they write.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "engine/collection.h"
#include "engine/geo_search.h"
#include "engine/geohash.h"
#include "engine/shard.h"
#include "engine/zset.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/key_util.h"
#include "server/keyspace_events.h"
#include "server/server.h"
#include "server/zset_store.h"

namespace lapse::server {

namespace errors = protocol::errors;
namespace geo = engine::geo;
namespace zset = engine::zset;
using engine::Entry;
using engine::ValueType;
using protocol::EqualsIgnoreCase;

namespace {

constexpr std::string_view kUnknownUnit = "ERR unsupported unit provided. please use M, KM, FT, MI";
constexpr std::string_view kUndecodableMember = "ERR could not decode requested zset member";

// ---- Arguments ----

// The metres in one `unit` (case-insensitive), or 0 for a unit Redis does not know.
double MetersPerUnit(std::string_view unit) {
  std::string_view u = AsCString(unit);
  if (EqualsIgnoreCase(u, "m")) return 1;
  if (EqualsIgnoreCase(u, "km")) return 1000;
  if (EqualsIgnoreCase(u, "ft")) return 0.3048;
  if (EqualsIgnoreCase(u, "mi")) return 1609.34;
  return 0;
}

// Each parser below reads its arguments from args[i] on; on bad input it sets *error to
// Redis's reply and returns false.

bool ParseLonLat(Args args, size_t i, double* lon, double* lat, std::string* error) {
  if (!protocol::ParseDouble(args[i], lon) || !protocol::ParseDouble(args[i + 1], lat))
    return *error = errors::kNotFloat, false;
  if (!geo::ValidPosition(*lon, *lat)) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "ERR invalid longitude,latitude pair %f,%f", *lon, *lat);
    return *error = buf, false;
  }
  return true;
}

bool ParseUnit(std::string_view arg, double* to_meters, std::string* error) {
  *to_meters = MetersPerUnit(arg);
  if (*to_meters == 0) return *error = kUnknownUnit, false;
  return true;
}

// radius unit
bool ParseRadius(Args args, size_t i, geo::Shape* shape, std::string* error) {
  if (!protocol::ParseDouble(args[i], &shape->radius)) return *error = "ERR need numeric radius", false;
  if (shape->radius < 0) return *error = "ERR radius cannot be negative", false;
  shape->kind = geo::Shape::Kind::kCircle;
  return ParseUnit(args[i + 1], &shape->to_meters, error);
}

// width height unit
bool ParseBox(Args args, size_t i, geo::Shape* shape, std::string* error) {
  if (!protocol::ParseDouble(args[i], &shape->width)) return *error = "ERR need numeric width", false;
  if (!protocol::ParseDouble(args[i + 1], &shape->height)) return *error = "ERR need numeric height", false;
  if (shape->width < 0 || shape->height < 0) return *error = "ERR height or width cannot be negative", false;
  shape->kind = geo::Shape::Kind::kBox;
  return ParseUnit(args[i + 2], &shape->to_meters, error);
}

// Where a member of `e` is; false when it is absent.
bool PositionOf(const Entry* e, std::string_view member, double* lon, double* lat) {
  std::optional<double> score = zset::Score(e, member);
  if (!score) return false;
  geo::DecodeScore(*score, lon, lat);
  return true;
}

// ---- Search requests ----

enum class Variant { kRadius, kRadiusByMember, kSearch, kSearchStore };
using geo::SortOrder;

struct SearchRequest {
  Variant variant = Variant::kSearch;
  geo::Shape shape;
  bool with_dist = false, with_hash = false, with_coord = false;
  SortOrder sort = SortOrder::kNone;
  bool any = false;
  int64_t count = 0;  // 0: no limit
  std::optional<size_t> store_index;  // the argument naming the destination
  bool store_dist = false;
};

// The index of the first option: what precedes it is fixed by the command.
size_t FirstOption(Variant v) {
  switch (v) {
    case Variant::kRadius:
      return 6;  // key lon lat radius unit
    case Variant::kRadiusByMember:
      return 5;  // key member radius unit
    case Variant::kSearch:
      return 2;  // key
    case Variant::kSearchStore:
      return 3;  // destination source
  }
  return 2;
}

// The search's centre and shape as GEORADIUS and GEORADIUSBYMEMBER give them before their
// options. Redis reads no radius for GEORADIUSBYMEMBER of a missing key.
bool ParseRadiusPrefix(Args args, const Entry* src, SearchRequest* r, std::string* error) {
  if (r->variant == Variant::kRadius) {
    return ParseLonLat(args, 2, &r->shape.lon, &r->shape.lat, error) && ParseRadius(args, 4, &r->shape, error);
  }
  if (r->variant == Variant::kRadiusByMember && src != nullptr) {
    if (!PositionOf(src, args[2], &r->shape.lon, &r->shape.lat)) return *error = kUndecodableMember, false;
    return ParseRadius(args, 3, &r->shape, error);
  }
  return true;
}

// Parses a search command whose source `src` (nullptr when missing) has been checked to
// be a sorted set; FROMMEMBER reads its member's position from it.
bool ParseSearch(Args args, const Entry* src, bool may_store, SearchRequest* r, std::string* error) {
  if (!ParseRadiusPrefix(args, src, r, error)) return false;
  bool search = r->variant == Variant::kSearch || r->variant == Variant::kSearchStore;
  if (r->variant == Variant::kSearchStore) r->store_index = 1;
  bool from_member = false, from_lonlat = false, by_radius = false, by_box = false;
  size_t argc = args.size();
  for (size_t j = FirstOption(r->variant); j < argc; ++j) {
    std::string_view opt = AsCString(args[j]);
    if (EqualsIgnoreCase(opt, "withdist")) {
      r->with_dist = true;
    } else if (EqualsIgnoreCase(opt, "withhash")) {
      r->with_hash = true;
    } else if (EqualsIgnoreCase(opt, "withcoord")) {
      r->with_coord = true;
    } else if (EqualsIgnoreCase(opt, "any")) {
      r->any = true;
    } else if (EqualsIgnoreCase(opt, "asc")) {
      r->sort = SortOrder::kAsc;
    } else if (EqualsIgnoreCase(opt, "desc")) {
      r->sort = SortOrder::kDesc;
    } else if (EqualsIgnoreCase(opt, "count") && j + 1 < argc) {
      if (!protocol::ParseInt64(args[j + 1], &r->count)) return *error = errors::kNotInteger, false;
      if (r->count <= 0) return *error = "ERR COUNT must be > 0", false;
      ++j;
    } else if ((EqualsIgnoreCase(opt, "store") || EqualsIgnoreCase(opt, "storedist")) && j + 1 < argc && may_store &&
               !search) {
      r->store_index = j + 1;
      r->store_dist = EqualsIgnoreCase(opt, "storedist");
      ++j;
    } else if (EqualsIgnoreCase(opt, "storedist") && r->variant == Variant::kSearchStore) {
      r->store_dist = true;
    } else if (EqualsIgnoreCase(opt, "frommember") && j + 1 < argc && search && !from_lonlat) {
      // Without a source Redis goes on parsing, to answer its empty reply or a later error.
      if (src != nullptr && !PositionOf(src, args[j + 1], &r->shape.lon, &r->shape.lat))
        return *error = kUndecodableMember, false;
      from_member = true;
      ++j;
    } else if (EqualsIgnoreCase(opt, "fromlonlat") && j + 2 < argc && search && !from_member) {
      if (!ParseLonLat(args, j + 1, &r->shape.lon, &r->shape.lat, error)) return false;
      from_lonlat = true;
      j += 2;
    } else if (EqualsIgnoreCase(opt, "byradius") && j + 2 < argc && search && !by_box) {
      if (!ParseRadius(args, j + 1, &r->shape, error)) return false;
      by_radius = true;
      j += 2;
    } else if (EqualsIgnoreCase(opt, "bybox") && j + 3 < argc && search && !by_radius) {
      if (!ParseBox(args, j + 1, &r->shape, error)) return false;
      by_box = true;
      j += 3;
    } else {
      return *error = errors::kSyntax, false;
    }
  }
  if (r->store_index && (r->with_dist || r->with_hash || r->with_coord)) {
    *error = std::string("ERR ") + (r->variant == Variant::kSearchStore ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
             " is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
    return false;
  }
  // Redis names the command as the client spelled it.
  std::string name(AsCString(args[0]));
  if (search && !from_member && !from_lonlat)
    return *error = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + name, false;
  if (search && !by_radius && !by_box)
    return *error = "ERR exactly one of BYRADIUS and BYBOX can be specified for " + name, false;
  if (r->any && r->count == 0) return *error = "ERR the ANY argument requires COUNT argument", false;
  // COUNT answers the nearest members, unless ANY takes the first ones found.
  if (r->count != 0 && r->sort == SortOrder::kNone && !r->any) r->sort = SortOrder::kAsc;
  return true;
}

// ---- Searching ----

// A parsed, run search: the points to answer or store are the first `returned`.
struct SearchResult {
  SearchRequest request;
  std::vector<geo::Point> points;
  size_t returned = 0;
};

// Parses and runs the search from `src` (nullptr when missing, already checked to be a
// sorted set otherwise: a missing source finds nothing); false with *error set on bad input.
bool RunSearch(Args args, const Entry* src, Variant variant, bool may_store, SearchResult* out, std::string* error) {
  out->request.variant = variant;
  if (!ParseSearch(args, src, may_store, &out->request, error)) return false;
  if (src == nullptr) return true;
  const SearchRequest& r = out->request;
  auto count = static_cast<size_t>(r.count);
  out->points = geo::FindInShape(src, r.shape, r.any ? count : 0);
  out->returned = count == 0 ? out->points.size() : std::min(count, out->points.size());
  geo::SortByDistance(out->points, r.sort, out->returned);
  return true;
}

// ---- Replies and stores ----

// Distances are answered with four decimals, in both protocols as a bulk string. Redis
// 7.0.15 rounds the distance times 10^4 to an integer (llrint: halves to even) rather than
// printing "%.4f" (which rounds the exact binary value), so 21224818.03325000033 is
// "21224818.0332" there.
std::string FormatDistance(double d) {
  long long scaled = std::llrint(d * 10000.0);
  bool negative = scaled < 0;
  unsigned long long value = negative ? 0ull - static_cast<unsigned long long>(scaled) : static_cast<unsigned long long>(scaled);
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%s%llu.%04llu", negative ? "-" : "", value / 10000, value % 10000);
  return std::string(buf, static_cast<size_t>(n));
}

void ReplyCoordinates(protocol::ReplyWriter& reply, double lon, double lat) {
  reply.ArrayHeader(2);
  reply.DoubleText(FormatLongDouble(lon));
  reply.DoubleText(FormatLongDouble(lat));
}

// The points found: bare members, or [member, dist?, hash?, [lon, lat]?] arrays.
size_t ReplyPoints(protocol::ReplyWriter& reply, const SearchResult& result) {
  const SearchRequest& r = result.request;
  size_t extras = size_t{r.with_dist} + r.with_hash + r.with_coord;
  size_t bytes = 0;
  reply.ArrayHeader(result.returned);
  for (size_t i = 0; i < result.returned; ++i) {
    const geo::Point& p = result.points[i];
    if (extras > 0) reply.ArrayHeader(extras + 1);
    reply.Bulk(p.member);
    if (r.with_dist) reply.Bulk(FormatDistance(p.dist / r.shape.to_meters));
    if (r.with_hash) reply.Integer(static_cast<int64_t>(p.score));
    if (r.with_coord) ReplyCoordinates(reply, p.lon, p.lat);
    bytes += p.member.size() + extras * sizeof(double);
  }
  return bytes;
}

using Elements = std::vector<std::pair<std::string, double>>;

// What a store writes: each member with its hash, or with STOREDIST its distance in the
// search's unit.
Elements StoredElements(const SearchResult& result) {
  Elements out;
  out.reserve(result.returned);
  for (size_t i = 0; i < result.returned; ++i) {
    const geo::Point& p = result.points[i];
    out.emplace_back(p.member, result.request.store_dist ? p.dist / result.request.shape.to_meters : p.score);
  }
  return out;
}

size_t ElementBytes(const Elements& elements) {
  size_t bytes = 0;
  for (const auto& [m, s] : elements) bytes += m.size() + sizeof(double);
  return bytes;
}

// ---- Keys of the storing searches ----

// GEORADIUS[BYMEMBER]'s keys: the source, then what Redis's key specs find (the argument
// after the first STORE and after the first STOREDIST among the options), then, if the
// options name another destination in the end (a second STORE), that one too.
void RadiusKeys(Args args, size_t first_option, std::vector<size_t>* out) {
  out->push_back(1);
  for (std::string_view keyword : {"store", "storedist"}) {
    for (size_t j = first_option; j + 1 < args.size(); ++j) {
      if (EqualsIgnoreCase(AsCString(args[j]), keyword)) {
        out->push_back(j + 1);
        break;
      }
    }
  }
  // The destination the handler will use: the last STORE or STOREDIST, stepping over the
  // value of COUNT as the parser does.
  std::optional<size_t> last;
  for (size_t j = first_option; j + 1 < args.size(); ++j) {
    std::string_view opt = AsCString(args[j]);
    if (EqualsIgnoreCase(opt, "count")) {
      ++j;
    } else if (EqualsIgnoreCase(opt, "store") || EqualsIgnoreCase(opt, "storedist")) {
      last = ++j;
    }
  }
  if (last && std::find(out->begin(), out->end(), *last) == out->end()) out->push_back(*last);
}

void GeoRadiusKeys(Args args, std::vector<size_t>* out) { RadiusKeys(args, FirstOption(Variant::kRadius), out); }
void GeoRadiusByMemberKeys(Args args, std::vector<size_t>* out) {
  RadiusKeys(args, FirstOption(Variant::kRadiusByMember), out);
}

// ---- Commands ----

Entry* FindZSet(ShardCommand& c, bool* wrong, Lookup kind) { return FindTyped(c, c.args[1], ValueType::kZSet, wrong, kind); }

// GEOSEARCH and the _RO forms: one key, never a store.
void ReadOnlySearch(ShardCommand& c, Variant variant) {
  bool wrong = false;
  Entry* src = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  SearchResult result;
  std::string error;
  if (!RunSearch(c.args, src, variant, false, &result, &error)) return c.reply.Error(error);
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + ReplyPoints(c.reply, result));
}

void CmdGeoSearch(ShardCommand& c) { ReadOnlySearch(c, Variant::kSearch); }
void CmdGeoRadiusRo(ShardCommand& c) { ReadOnlySearch(c, Variant::kRadius); }
void CmdGeoRadiusByMemberRo(ShardCommand& c) { ReadOnlySearch(c, Variant::kRadiusByMember); }

// GEOSEARCHSTORE, GEORADIUS and GEORADIUSBYMEMBER: the source at `src_index`; they answer
// the points found, or store them and answer how many.
void StoringSearch(ConnCommand& c, Variant variant, size_t src_index, KeyFinder find_keys) {
  std::vector<size_t> keys = {1, 2};  // GEOSEARCHSTORE's destination and source
  if (find_keys != nullptr) {
    keys.clear();
    find_keys(c.args, &keys);
  }
  ShardSet& shards = c.server.shards();
  std::vector<uint32_t> ids;
  for (size_t i : keys) ids.push_back(shards.ShardFor(c.args[i]));
  int64_t now = c.server.clock().NowMs();
  engine::CollectionLimits limits = c.server.collection_limits();
  auto db_of = [&](std::string_view key) -> engine::Db& { return shards.shard(shards.ShardFor(key)).db(c.session.db); };
  bool wrong_type = false, bad_input = false;
  std::string error;
  SearchResult result;
  Elements stored;
  shards.RunHolding(ids, [&] {
    std::string_view src_key = c.args[src_index];
    engine::Shard& src_shard = shards.shard(shards.ShardFor(src_key));
    Entry* src = FindKey(src_shard, db_of(src_key), src_key, now, Lookup::kRead);
    if (src != nullptr && src->type() != ValueType::kZSet) {
      wrong_type = true;
      return;
    }
    if (!RunSearch(c.args, src, variant, true, &result, &error)) {
      bad_input = true;
      return;
    }
    if (!result.request.store_index) return;
    std::string_view dest = c.args[*result.request.store_index];
    stored = StoredElements(result);
    StoreZSet(c, db_of(dest), dest, stored, limits, now, variant == Variant::kSearchStore ? "geosearchstore" : "georadiusstore");
    if (!stored.empty()) c.changes = stored.size();  // Redis counts each member a search stored
  });
  if (wrong_type) return c.reply.Error(errors::kWrongType);
  if (bad_input) return c.reply.Error(error);
  if (result.request.store_index) {
    size_t bytes = ElementBytes(stored);
    c.charge.Add(engine::RuOp::kRead, c.args[src_index].size() + bytes);
    ChargeWrite(c.charge, false, c.args[*result.request.store_index].size() + bytes);
    return c.reply.Integer(static_cast<int64_t>(stored.size()));
  }
  c.charge.Add(engine::RuOp::kRead, c.args[src_index].size() + ReplyPoints(c.reply, result));
}

void CmdGeoSearchStore(ConnCommand& c) { StoringSearch(c, Variant::kSearchStore, 2, nullptr); }
void CmdGeoRadius(ConnCommand& c) { StoringSearch(c, Variant::kRadius, 1, GeoRadiusKeys); }
void CmdGeoRadiusByMember(ConnCommand& c) { StoringSearch(c, Variant::kRadiusByMember, 1, GeoRadiusByMemberKeys); }

// GEOADD key [NX|XX] [CH] lon lat member [lon lat member ...]: ZADD with the positions'
// scores, as Redis runs it. Every position is checked before anything changes.
void CmdGeoAdd(ShardCommand& c) {
  bool nx = false, xx = false, ch = false;
  size_t i = 2;
  for (; i < c.args.size(); ++i) {
    std::string_view opt = AsCString(c.args[i]);
    if (EqualsIgnoreCase(opt, "nx")) nx = true;
    else if (EqualsIgnoreCase(opt, "xx")) xx = true;
    else if (EqualsIgnoreCase(opt, "ch")) ch = true;
    else break;
  }
  size_t rest = c.args.size() - i;
  // No position at all is ZADD's syntax error in Redis, which GEOADD hands its work to.
  if (rest == 0 || rest % 3 != 0 || (nx && xx)) return c.reply.Error(errors::kSyntax);
  std::vector<double> scores;
  for (size_t p = i; p < c.args.size(); p += 3) {
    double lon = 0, lat = 0;
    std::string error;
    if (!ParseLonLat(c.args, p, &lon, &lat, &error)) return c.reply.Error(error);
    scores.push_back(geo::ScoreOf(lon, lat));
  }
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kWrite);
  if (wrong) return;
  engine::CollectionLimits limits = c.server.collection_limits();
  if (!e && !xx) {
    // Redis picks the layout from the first member alone when it creates the key.
    bool table = limits.zset_max_listpack_entries == 0 || c.args[i + 2].size() > limits.zset_max_listpack_value;
    e = zset::Create(c.db, c.args[1], c.now_ms, table);
  }
  int64_t added = 0, updated = 0;
  for (size_t p = 0; e && p < scores.size(); ++p) {
    std::string_view member = c.args[i + 3 * p + 2];
    std::optional<double> current = zset::Score(e, member);
    if (current && (nx || *current == scores[p])) continue;
    if (!current && xx) continue;
    zset::Set(c.db, e, member, scores[p], limits);
    (current ? updated : added) += 1;
    ChargeWrite(c.charge, current.has_value(), member.size() + sizeof(double));
  }
  c.changes = static_cast<uint64_t>(added + updated);  // as ZADD, which Redis hands GEOADD to
  if (added + updated > 0) {
    c.db.Touch(c.args[1]);
    NotifyKeyspace(c, kEventZset, "zadd", c.args[1]);
  } else {
    c.charge.Add(engine::RuOp::kRead, c.args[1].size());
  }
  c.reply.Integer(ch ? added + updated : added);
}

// GEOPOS and GEOHASH: one reply per member, found(lon, lat) or missing(); charged the key,
// the members and `bytes_each` per member found.
template <typename Found, typename Missing>
void ReplyPerMember(ShardCommand& c, size_t bytes_each, Found found, Missing missing) {
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  size_t bytes = c.args[1].size();
  c.reply.ArrayHeader(c.args.size() - 2);
  for (size_t i = 2; i < c.args.size(); ++i) {
    double lon = 0, lat = 0;
    if (!e || !PositionOf(e, c.args[i], &lon, &lat)) {
      missing();
      continue;
    }
    found(lon, lat);
    bytes += c.args[i].size() + bytes_each;
  }
  c.charge.Add(engine::RuOp::kRead, bytes);
}

// GEOPOS key member...: [lon, lat] per member, a null array for a missing one.
void CmdGeoPos(ShardCommand& c) {
  ReplyPerMember(
      c, 2 * sizeof(double), [&](double lon, double lat) { ReplyCoordinates(c.reply, lon, lat); },
      [&] { c.reply.NullArray(); });
}

// GEODIST key member1 member2 [unit]
void CmdGeoDist(ShardCommand& c) {
  double to_meters = 1;
  if (c.args.size() > 5) return c.reply.Error(errors::kSyntax);
  if (c.args.size() == 5) {
    std::string error;
    if (!ParseUnit(c.args[4], &to_meters, &error)) return c.reply.Error(error);
  }
  bool wrong = false;
  Entry* e = FindZSet(c, &wrong, Lookup::kRead);
  if (wrong) return;
  c.charge.Add(engine::RuOp::kRead, c.args[1].size() + c.args[2].size() + c.args[3].size());
  double lon1 = 0, lat1 = 0, lon2 = 0, lat2 = 0;
  if (!e || !PositionOf(e, c.args[2], &lon1, &lat1) || !PositionOf(e, c.args[3], &lon2, &lat2)) return c.reply.Null();
  c.reply.Bulk(FormatDistance(geo::Distance(lon1, lat1, lon2, lat2) / to_meters));
}

// GEOHASH key member...: the standard 11-character geohash per member, null if missing.
void CmdGeoHash(ShardCommand& c) {
  ReplyPerMember(
      c, 11, [&](double lon, double lat) { c.reply.Bulk(geo::StandardHash(lon, lat)); }, [&] { c.reply.Null(); });
}

}  // namespace

void RegisterGeoCommands(CommandTable& table) {
  constexpr uint32_t kW = kWrite, kR = kReadOnly, kM = kDenyOom;
  const std::string g = "geo";
  table.Add({"geoadd", -5, kW | kM, 1, 1, 1, CmdGeoAdd, g, "Add one or more geospatial items in the geospatial index represented using a sorted set"});
  table.Add({"geopos", -2, kR, 1, 1, 1, CmdGeoPos, g, "Returns longitude and latitude of members of a geospatial index"});
  table.Add({"geodist", -4, kR, 1, 1, 1, CmdGeoDist, g, "Returns the distance between two members of a geospatial index"});
  table.Add({"geohash", -2, kR, 1, 1, 1, CmdGeoHash, g, "Returns members of a geospatial index as standard geohash strings"});
  CommandSpec georadius{"georadius", -6, kW | kM, 1, 1, 1, CmdGeoRadius, g, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point"};
  georadius.find_keys = GeoRadiusKeys;
  table.Add(std::move(georadius));
  table.Add({"georadius_ro", -6, kR, 1, 1, 1, CmdGeoRadiusRo, g, "A read-only variant for GEORADIUS"});
  CommandSpec by_member{"georadiusbymember", -5, kW | kM, 1, 1, 1, CmdGeoRadiusByMember, g, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member"};
  by_member.find_keys = GeoRadiusByMemberKeys;
  table.Add(std::move(by_member));
  table.Add({"georadiusbymember_ro", -5, kR, 1, 1, 1, CmdGeoRadiusByMemberRo, g, "A read-only variant for GEORADIUSBYMEMBER"});
  table.Add({"geosearch", -7, kR, 1, 1, 1, CmdGeoSearch, g, "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle."});
  table.Add({"geosearchstore", -8, kW | kM, 1, 2, 1, CmdGeoSearchStore, g, "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key."});
}

}  // namespace lapse::server
