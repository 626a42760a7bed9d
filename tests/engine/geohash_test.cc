// File: tests/engine/geohash_test.cc
//
// The geohash arithmetic against values Debian's redis-server 7.0.15 answers: stored
// scores (GEOADD then ZSCORE), decoded positions (GEOPOS, 17 decimals), standard hashes
// (GEOHASH) and distances (GEODIST); then properties that hold for any position: a stored
// position decodes to within its cell, neighbours wrap around, and the nine cells of a
// search cover every point of its shape. Redis's two sorts (engine/redis_sort.h) are
// checked against a full sort and against an order Redis 7.0's pqsort produced, and a search
// over a sorted set of either layout (engine/geo_search.h) against a scan of every member.

#include "engine/geohash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/db.h"
#include "engine/geo_search.h"
#include "engine/redis_sort.h"
#include "engine/zset.h"

namespace lapse::engine::geo {
namespace {

// Redis's human long-double form of a coordinate ("%.17Lf" without trailing zeros).
std::string Human(double v) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%.17Lf", static_cast<long double>(v));
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

TEST(GeohashTest, StoredScoresMatchRedis) {
  EXPECT_EQ(ScoreOf(13.361389, 38.115556), 3479099956230698.0);  // Palermo
  EXPECT_EQ(ScoreOf(15.087269, 37.502669), 3479447370796909.0);  // Catania
  EXPECT_EQ(ScoreOf(-180, -85.05112878), 0.0);
}

TEST(GeohashTest, DecodedPositionsMatchRedis) {
  double lon = 0, lat = 0;
  DecodeScore(3479099956230698.0, &lon, &lat);
  EXPECT_EQ(Human(lon), "13.36138933897018433");
  EXPECT_EQ(Human(lat), "38.11555639549629859");
  DecodeScore(3479447370796909.0, &lon, &lat);
  EXPECT_EQ(Human(lon), "15.08726745843887329");
  EXPECT_EQ(Human(lat), "37.50266842333162032");
}

// Scores that are no geohash decode as Redis's x86-64 build decodes them.
TEST(GeohashTest, ForeignScoresDecodeAsRedis) {
  double lon = 0, lat = 0;
  DecodeScore(-1, &lon, &lat);  // wraps to all ones: clamped to the north-east corner
  EXPECT_EQ(Human(lon), "180");
  EXPECT_EQ(Human(lat), "85.0511287799999991");
  DecodeScore(INFINITY, &lon, &lat);  // converts to 0
  EXPECT_EQ(Human(lon), "-179.99999731779098511");
  EXPECT_EQ(Human(lat), "-85.05112751263942528");
  DecodeScore(-INFINITY, &lon, &lat);  // converts to 2^63
  EXPECT_EQ(Human(lon), "180");
  EXPECT_EQ(Human(lat), "-85.05112751263942528");
  DecodeScore(1.5, &lon, &lat);  // truncated to 1
  EXPECT_EQ(Human(lat), "-85.05112497791824921");
}

TEST(GeohashTest, StandardHashesMatchRedis) {
  double lon = 0, lat = 0;
  DecodeScore(3479099956230698.0, &lon, &lat);
  EXPECT_EQ(StandardHash(lon, lat), "sqc8b49rny0");
  DecodeScore(3479447370796909.0, &lon, &lat);
  EXPECT_EQ(StandardHash(lon, lat), "sqdtr74hyu0");
  DecodeScore(-1, &lon, &lat);
  EXPECT_EQ(StandardHash(lon, lat), "bp05b5048p0");
  DecodeScore(INFINITY, &lon, &lat);
  EXPECT_EQ(StandardHash(lon, lat), "00bh0hbj200");
}

TEST(GeohashTest, DistancesMatchRedis) {
  double lon1 = 0, lat1 = 0, lon2 = 0, lat2 = 0;
  DecodeScore(3479099956230698.0, &lon1, &lat1);
  DecodeScore(3479447370796909.0, &lon2, &lat2);
  EXPECT_NEAR(Distance(lon1, lat1, lon2, lat2), 166274.1516, 5e-5);  // GEODIST Palermo Catania
  EXPECT_EQ(Distance(lon1, lat1, lon2, lat2), Distance(lon2, lat2, lon1, lat1));
  EXPECT_EQ(Distance(lon1, lat1, lon1, lat1), 0);
  // On one meridian the distance is the arc between the latitudes, exactly as Redis has it.
  EXPECT_EQ(Distance(10, 20, 10, 40), LatitudeDistance(20, 40));
  EXPECT_NEAR(Distance(0, 0, 180, 0), M_PI * kEarthRadiusMeters, 1e-6);
}

TEST(GeohashTest, EncodeDecodeRoundTripStaysInTheCell) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> lons(kLonMin, kLonMax), lats(kLatMin, kLatMax);
  for (int i = 0; i < 10000; ++i) {
    double lon = lons(rng), lat = lats(rng);
    double score = ScoreOf(lon, lat);
    ASSERT_LT(score, 4503599627370496.0);  // 52 bits
    double dlon = 0, dlat = 0;
    DecodeScore(score, &dlon, &dlat);
    // A step-26 cell is 360 / 2^26 degrees wide: the centre is within half of that.
    EXPECT_LE(std::fabs(dlon - lon), 360.0 / (1 << 26) / 2 + 1e-12);
    EXPECT_LE(std::fabs(dlat - lat), (kLatMax - kLatMin) / (1 << 26) / 2 + 1e-12);
    // Decoding is stable: the decoded position is stored under the same score.
    EXPECT_EQ(ScoreOf(dlon, dlat), score);
  }
}

TEST(GeohashTest, EncodeRejectsPositionsOutsideTheLimits) {
  HashBits hash;
  EXPECT_FALSE(EncodeWgs84(180.0001, 0, kStepMax, &hash));
  EXPECT_FALSE(EncodeWgs84(0, 85.06, kStepMax, &hash));
  EXPECT_FALSE(EncodeWgs84(0, 0, 0, &hash));
  EXPECT_FALSE(ValidPosition(0, -85.0512));
  EXPECT_TRUE(ValidPosition(-180, 85.05112878));
}

TEST(GeohashTest, NeighboursAreAdjacentAndWrap) {
  HashBits hash;
  ASSERT_TRUE(EncodeWgs84(13.36, 38.11, 10, &hash));
  Neighbors n = NeighborsOf(hash);
  Area centre, east, north, west;
  ASSERT_TRUE(Decode(hash, &centre));
  ASSERT_TRUE(Decode(n.east, &east));
  ASSERT_TRUE(Decode(n.north, &north));
  ASSERT_TRUE(Decode(n.west, &west));
  EXPECT_DOUBLE_EQ(east.lon.min, centre.lon.max);
  EXPECT_DOUBLE_EQ(west.lon.max, centre.lon.min);
  EXPECT_DOUBLE_EQ(north.lat.min, centre.lat.max);
  EXPECT_EQ(NeighborsOf(n.east).west, hash);
  EXPECT_EQ(NeighborsOf(n.north_east).south_west, hash);
  // At the antimeridian the east neighbour is the westmost column.
  ASSERT_TRUE(EncodeWgs84(179.99, 0, 5, &hash));
  ASSERT_TRUE(Decode(NeighborsOf(hash).east, &east));
  EXPECT_EQ(east.lon.min, -180);
}

TEST(GeohashTest, EstimatedSteps) {
  EXPECT_EQ(EstimateStepsByRadius(0, 0), 26);
  EXPECT_EQ(EstimateStepsByRadius(1000, 0), 14);
  EXPECT_EQ(EstimateStepsByRadius(1000, 70), 13);   // wider cells past 66 degrees
  EXPECT_EQ(EstimateStepsByRadius(1000, -85), 12);  // and again past 80
  EXPECT_EQ(EstimateStepsByRadius(5e7, 0), 1);
  EXPECT_EQ(EstimateStepsByRadius(0.001, 0), 26);
}

// Every point inside a shape lies in one of the cells CoverShape returns.
TEST(GeohashTest, CoverShapeHoldsEveryMatch) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> lons(kLonMin, kLonMax), lats(-80, 80), unit(0, 1);
  for (int round = 0; round < 300; ++round) {
    Shape shape;
    shape.lon = lons(rng);
    shape.lat = lats(rng);
    shape.kind = round % 2 ? Shape::Kind::kCircle : Shape::Kind::kBox;
    double size = std::pow(10.0, 2 + 4 * unit(rng));  // 100 m .. 1000 km
    shape.radius = size;
    shape.width = size * (0.5 + unit(rng));
    shape.height = size * (0.5 + unit(rng));
    std::array<HashBits, 9> cells = CoverShape(shape);
    for (int i = 0; i < 200; ++i) {
      double lon = shape.lon + (unit(rng) - 0.5) * size / 40000.0;
      double lat = shape.lat + (unit(rng) - 0.5) * size / 40000.0;
      if (!ValidPosition(lon, lat)) continue;
      double score = ScoreOf(lon, lat), dlon = 0, dlat = 0, dist = 0;
      DecodeScore(score, &dlon, &dlat);
      if (!WithinShape(shape, dlon, dlat, &dist)) continue;
      bool covered = std::any_of(cells.begin(), cells.end(), [&](HashBits c) {
        if (c.IsNone()) return false;
        HashBits next = c;
        ++next.bits;
        return score >= static_cast<double>(Align52(c)) && score < static_cast<double>(Align52(next));
      });
      EXPECT_TRUE(covered) << "round " << round << " point " << lon << "," << lat;
    }
  }
}

TEST(GeohashTest, BoxMeasuresAlongMeridianAndParallel) {
  Shape box;
  box.kind = Shape::Kind::kBox;
  box.width = 200000;   // 200 km east-west
  box.height = 20000;   // 20 km north-south
  double d = 0;
  EXPECT_TRUE(WithinShape(box, 0.8, 0, &d));    // ~89 km east
  EXPECT_FALSE(WithinShape(box, 0, 0.2, &d));   // ~22 km north
  EXPECT_TRUE(WithinShape(box, 0, 0.08, &d));   // ~8.9 km north
  EXPECT_NEAR(d, LatitudeDistance(0, 0.08), 1e-9);
}

}  // namespace
}  // namespace lapse::engine::geo

namespace lapse::engine {
namespace {

int CompareKeys(int a, int b) { return a > b ? 1 : a == b ? 0 : -1; }

struct Item {
  int key = 0;
  int id = 0;
};

int CompareItems(const Item& a, const Item& b) { return CompareKeys(a.key, b.key); }

TEST(RedisSortTest, PartialQuickSortSortsTheWantedRanks) {
  std::mt19937 rng(3);
  for (int round = 0; round < 2000; ++round) {
    size_t n = 1 + rng() % 300;
    std::vector<int> v(n);
    for (int& x : v) x = static_cast<int>(rng() % (1 + rng() % 100));
    std::vector<int> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    size_t last = rng() % n;
    PartialQuickSort(v, 0, last, CompareKeys);
    for (size_t i = 0; i <= last; ++i) ASSERT_EQ(v[i], sorted[i]) << "round " << round << " rank " << i;
  }
}

// The order Redis 7.0's pqsort leaves equal keys in, recorded from its C source: 60 items
// with key (37 i + 11) mod 9, ranks 0..19 wanted.
TEST(RedisSortTest, PartialQuickSortOrdersTiesAsRedis) {
  std::vector<Item> v(60);
  for (int i = 0; i < 60; ++i) v[i] = {(i * 37 + 11) % 9, i};
  PartialQuickSort(v, 0, 19, CompareItems);
  std::vector<int> ids;
  for (size_t i = 0; i < 20; ++i) ids.push_back(v[i].id);
  EXPECT_EQ(ids, (std::vector<int>{25, 16, 52, 43, 34, 7, 26, 17, 8, 44, 53, 35, 0, 9, 18, 27, 36, 45, 54, 46}));
}

TEST(RedisSortTest, MergeSortIsStable) {
  std::mt19937 rng(5);
  std::vector<Item> v(500);
  for (int i = 0; i < 500; ++i) v[i] = {static_cast<int>(rng() % 20), i};
  std::vector<Item> expected = v;
  std::stable_sort(expected.begin(), expected.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  MergeSort(v, CompareItems);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].id, expected[i].id);
  std::vector<Item> empty;
  MergeSort(empty, CompareItems);
  PartialQuickSort(empty, 0, 0, CompareItems);
}

}  // namespace
}  // namespace lapse::engine

namespace lapse::engine::geo {
namespace {

constexpr int64_t kNow = 1000;

// A geo index of `n` members on a grid around (13, 38), some sharing a position, in the
// packed layout or the table one.
Entry* BuildIndex(Db& db, size_t n, bool table) {
  CollectionLimits limits;
  limits.zset_max_listpack_entries = table ? 0 : 1000;
  limits.zset_max_listpack_value = 64;
  Entry* e = zset::Create(db, "g", kNow, table);
  for (size_t i = 0; i < n; ++i) {
    double lon = 13 + static_cast<double>(i % 17) * 0.05, lat = 38 + static_cast<double>(i % 13) * 0.04;
    zset::Set(db, e, "m" + std::to_string(i), ScoreOf(lon, lat), limits);
  }
  return e;
}

// What a scan of every member finds, as a set.
std::set<std::string> BruteForce(const Entry* e, const Shape& shape) {
  std::set<std::string> out;
  zset::ForEach(e, [&](std::string_view m, double score) {
    double lon = 0, lat = 0, d = 0;
    DecodeScore(score, &lon, &lat);
    if (WithinShape(shape, lon, lat, &d)) out.insert(std::string(m));
  });
  return out;
}

TEST(GeoSearchTest, FindsWhatAFullScanFinds) {
  for (bool table : {false, true}) {
    Db db(kNow);
    Entry* e = BuildIndex(db, 300, table);
    std::mt19937 rng(table ? 1 : 2);
    for (int round = 0; round < 200; ++round) {
      Shape shape;
      shape.lon = 13 + (rng() % 1000) / 1000.0;
      shape.lat = 38 + (rng() % 600) / 1000.0;
      shape.kind = round % 2 ? Shape::Kind::kCircle : Shape::Kind::kBox;
      shape.to_meters = 1000;
      shape.radius = (rng() % 5000) / 100.0;
      shape.width = (rng() % 8000) / 100.0;
      shape.height = (rng() % 8000) / 100.0;
      std::vector<Point> found = FindInShape(e, shape, 0);
      std::set<std::string> members;
      for (const Point& p : found) {
        EXPECT_TRUE(members.insert(p.member).second) << p.member << " found twice";
        double d = 0;
        EXPECT_TRUE(WithinShape(shape, p.lon, p.lat, &d));
        EXPECT_EQ(d, p.dist);
        EXPECT_EQ(p.score, *zset::Score(e, p.member));
      }
      EXPECT_EQ(members, BruteForce(e, shape)) << "round " << round << (table ? " table" : " packed");
    }
  }
}

TEST(GeoSearchTest, LimitStopsTheSearchEarly) {
  Db db(kNow);
  Entry* e = BuildIndex(db, 300, false);
  Shape shape;
  shape.lon = 13.4;
  shape.lat = 38.2;
  shape.radius = 100000;
  std::vector<Point> all = FindInShape(e, shape, 0);
  ASSERT_GT(all.size(), 10u);
  std::vector<Point> some = FindInShape(e, shape, 10);
  ASSERT_EQ(some.size(), 10u);
  // The first ten found, in the same order.
  for (size_t i = 0; i < some.size(); ++i) EXPECT_EQ(some[i].member, all[i].member);
}

TEST(GeoSearchTest, SortsByDistanceKeepingTiesInOrderForAFullSort) {
  Db db(kNow);
  Entry* e = BuildIndex(db, 200, false);
  Shape shape;
  shape.lon = 13.4;
  shape.lat = 38.2;
  shape.radius = 100000;
  std::vector<Point> found = FindInShape(e, shape, 0);
  std::vector<Point> asc = found, desc = found;
  SortByDistance(asc, SortOrder::kAsc, asc.size());
  SortByDistance(desc, SortOrder::kDesc, desc.size());
  std::vector<Point> expected = found;
  std::stable_sort(expected.begin(), expected.end(), [](const Point& a, const Point& b) { return a.dist < b.dist; });
  for (size_t i = 0; i < asc.size(); ++i) EXPECT_EQ(asc[i].member, expected[i].member);
  std::stable_sort(expected.begin(), expected.end(), [](const Point& a, const Point& b) { return a.dist > b.dist; });
  for (size_t i = 0; i < desc.size(); ++i) EXPECT_EQ(desc[i].member, expected[i].member);
  // Only the nearest five: their distances are the five smallest.
  std::vector<Point> nearest = found;
  SortByDistance(nearest, SortOrder::kAsc, 5);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(nearest[i].dist, asc[i].dist);
  // No order: as found.
  std::vector<Point> unsorted = found;
  SortByDistance(unsorted, SortOrder::kNone, unsorted.size());
  for (size_t i = 0; i < found.size(); ++i) EXPECT_EQ(unsorted[i].member, found[i].member);
}

}  // namespace
}  // namespace lapse::engine::geo
