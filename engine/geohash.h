// File: engine/geohash.h
//
// The geohash arithmetic behind the GEO commands, computing what Redis 7.0's geohash.c and
// geohash_helper.c compute, in the same floating-point order, so that scores, positions,
// distances and the cells a search visits agree with Redis to the last bit.
//
// A position is stored as the score of a sorted-set member: a 52-bit integer (exact in a
// double) that interleaves 26 bits of longitude and 26 bits of latitude, longitude in the
// odd bits, latitude in the even ones. Each coordinate's bits are its fixed-point offset in
// its range: longitude in [-180, 180], latitude in [-85.05112878, 85.05112878] (the limits
// of the Web Mercator projection, as Redis's). A hash of `step` bits per coordinate names a
// cell; the cells of one step partition the plane, and a cell's members are exactly the
// scores in [bits << (52 - 2 step), (bits + 1) << (52 - 2 step)).
//
// A search around a point covers its shape (a circle, or a box measured along the
// meridian and the parallel) with nine cells of one step, the point's and its eight
// neighbours, chosen by CoverShape as Redis chooses them (the step from the radius, one
// step coarser when a neighbour does not reach the shape's bounding box, neighbours that
// cannot hold a match left out). Candidates from those cells are then checked exactly.
//
// Distances are great-circle distances by the haversine formula on a sphere of Redis's
// radius (6372797.560856 m). Everything here is plain arithmetic: no keys, no replies.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace lapse::engine::geo {

inline constexpr double kLonMin = -180;
inline constexpr double kLonMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
// Bits per coordinate of a stored position.
inline constexpr int kStepMax = 26;
inline constexpr double kEarthRadiusMeters = 6372797.560856;
// Half the Earth's circumference in Web Mercator metres: the widest a cell can be.
inline constexpr double kMercatorMax = 20037726.37;

struct Range {
  double min = 0, max = 0;
};

// A cell: `step` bits of each coordinate, interleaved. The all-zero value means "no cell"
// (a neighbour left out of a search).
struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool IsNone() const { return bits == 0 && step == 0; }
  bool operator==(const HashBits&) const = default;
};

// The bounds of a cell.
struct Area {
  Range lon, lat;
};

// Whether a position may be stored (GEOADD) or searched from.
inline bool ValidPosition(double lon, double lat) {
  return lon >= kLonMin && lon <= kLonMax && lat >= kLatMin && lat <= kLatMax;
}

// The cell of `step` bits (1..32) holding (lon, lat) within the given ranges; false when the
// position is outside them or outside the storable limits. A coordinate equal to its
// range's maximum spills into the next bit, as it does in Redis.
bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, HashBits* out);
// With the storable ranges.
bool EncodeWgs84(double lon, double lat, int step, HashBits* out);
// The 52-bit score of a cell's first position.
uint64_t Align52(HashBits hash);
// The score a position is stored under (it must be ValidPosition).
double ScoreOf(double lon, double lat);

// A cell's bounds within the storable ranges; false for "no cell".
bool Decode(HashBits hash, Area* out);
// The position a score stands for: its step-26 cell's centre, clamped to the storable
// limits. Any score decodes (Redis's conversion of a score to 64 bits as x86-64 does it:
// a negative score wraps, an infinite or NaN one gives a fixed pattern).
void DecodeScore(double score, double* lon, double* lat);

// The 11-character standard geohash of a stored position (GEOHASH): re-encoded with the
// latitude range [-90, 90], 52 bits, then a final '0' as Redis pads it.
std::string StandardHash(double lon, double lat);

// The eight neighbouring cells of the same step, wrapping around the ranges.
struct Neighbors {
  HashBits north, south, east, west, north_east, north_west, south_east, south_west;
};
Neighbors NeighborsOf(HashBits hash);

// The step whose cells are about as wide as `range_meters` at latitude `lat` (1..26).
int EstimateStepsByRadius(double range_meters, double lat);

// Great-circle distance in metres between two positions given in degrees.
double Distance(double lon1, double lat1, double lon2, double lat2);
// The distance in metres between two latitudes along a meridian.
double LatitudeDistance(double lat1, double lat2);

// What a search looks for: a circle of `radius`, or a `width` x `height` box, centred on
// (lon, lat); lengths in a unit of `to_meters` metres.
struct Shape {
  enum class Kind { kCircle, kBox } kind = Kind::kCircle;
  double lon = 0, lat = 0;
  double to_meters = 1;
  double radius = 0;
  double width = 0, height = 0;
};

// Whether (lon, lat) lies in the shape; when it does, its distance in metres from the
// shape's centre is stored in *distance.
bool WithinShape(const Shape& shape, double lon, double lat, double* distance);

// The nine cells a search of `shape` visits, in Redis's order: the centre's, then north,
// south, east, west, north-east, north-west, south-east, south-west. Cells that cannot
// hold a match are "no cell".
std::array<HashBits, 9> CoverShape(const Shape& shape);

}  // namespace lapse::engine::geo
