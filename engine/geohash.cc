// File: engine/geohash.cc
//
// See geohash.h. Each computation keeps Redis's operation order (and its integer widths)
// on purpose: a reordered product or a 64-bit sum where Redis has a 32-bit one would move
// a coordinate by an ulp, and then a 17-digit GEOPOS reply or a point on a cell's edge no
// longer agrees.
#include "engine/geohash.h"

#include <cmath>
#include <limits>

namespace lapse::engine::geo {
namespace {

constexpr double kDegToRad = M_PI / 180.0;
constexpr Range kLonRange{kLonMin, kLonMax};
constexpr Range kLatRange{kLatMin, kLatMax};

double DegToRad(double degrees) { return degrees * kDegToRad; }
double RadToDeg(double radians) { return radians / kDegToRad; }

// Spreads the 32 bits of v over the even bits of a 64-bit word.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x << 2)) & 0x3333333333333333ull;
  x = (x | (x << 1)) & 0x5555555555555555ull;
  return x;
}

// Gathers the even bits of a 64-bit word into 32 bits.
uint32_t Gather(uint64_t x) {
  x &= 0x5555555555555555ull;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<uint32_t>(x);
}

// Latitude in the even bits, longitude in the odd ones.
uint64_t Interleave(uint32_t lat_bits, uint32_t lon_bits) { return Spread(lat_bits) | (Spread(lon_bits) << 1); }

// x86-64's cvttsd2si: a value outside int64's range (or NaN) gives INT64_MIN.
int64_t TruncateToInt64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// Redis converts a score to its bits with a C cast to uint64_t, which is undefined for
// negative or huge scores; what it then does is what gcc's x86-64 code does, reproduced
// here so that GEOPOS of a non-geo member answers as Redis does.
uint64_t ScoreBits(double score) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (score >= kTwo63) return static_cast<uint64_t>(TruncateToInt64(score - kTwo63)) ^ (uint64_t{1} << 63);
  return static_cast<uint64_t>(TruncateToInt64(score));
}

bool DecodeIn(Range lon_range, Range lat_range, HashBits hash, Area* out) {
  if (hash.IsNone()) return false;
  uint32_t lat_cell = Gather(hash.bits);
  uint32_t lon_cell = Gather(hash.bits >> 1);
  double cells = static_cast<double>(uint64_t{1} << hash.step);
  double lat_scale = lat_range.max - lat_range.min;
  double lon_scale = lon_range.max - lon_range.min;
  // The "+ 1" is 32-bit, as Redis's: the last cell of a wrapped score ends at the start.
  uint32_t lat_next = lat_cell + 1, lon_next = lon_cell + 1;
  out->lat.min = lat_range.min + (lat_cell * 1.0 / cells) * lat_scale;
  out->lat.max = lat_range.min + (lat_next * 1.0 / cells) * lat_scale;
  out->lon.min = lon_range.min + (lon_cell * 1.0 / cells) * lon_scale;
  out->lon.max = lon_range.min + (lon_next * 1.0 / cells) * lon_scale;
  return true;
}

// Moves a cell one step along the axis whose bits `axis` selects (longitude: the odd bits,
// latitude: the even ones), up (d > 0) or down (d < 0), wrapping around: those bits are
// incremented or decremented in place, carrying through the other axis's bits between them.
void MoveAlong(HashBits* hash, int d, uint64_t axis) {
  uint64_t moving = hash->bits & axis;
  uint64_t fixed = hash->bits & ~axis;
  uint64_t other_mask = ~axis >> (64 - hash->step * 2);
  if (d > 0) {
    moving = moving + (other_mask + 1);
  } else {
    moving = moving | other_mask;
    moving = moving - (other_mask + 1);
  }
  moving &= axis >> (64 - hash->step * 2);
  hash->bits = moving | fixed;
}

// One column east or west, one row north or south.
void MoveX(HashBits* hash, int d) { MoveAlong(hash, d, 0xAAAAAAAAAAAAAAAAull); }
void MoveY(HashBits* hash, int d) { MoveAlong(hash, d, 0x5555555555555555ull); }

HashBits Moved(HashBits hash, int dx, int dy) {
  if (dx != 0) MoveX(&hash, dx);
  if (dy != 0) MoveY(&hash, dy);
  return hash;
}

// The shape's bounding box: [0] min lon, [1] min lat, [2] max lon, [3] max lat. A box's
// sides are bent (a parallel is shorter nearer the pole), so its longitude span is taken at
// the edge nearer the equator, where it is widest.
std::array<double, 4> BoundingBox(const Shape& s) {
  bool circle = s.kind == Shape::Kind::kCircle;
  double height = s.to_meters * (circle ? s.radius : s.height / 2);
  double width = s.to_meters * (circle ? s.radius : s.width / 2);
  const double lat_delta = RadToDeg(height / kEarthRadiusMeters);
  const double lon_delta_top = RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(s.lat + lat_delta)));
  const double lon_delta_bottom = RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(s.lat - lat_delta)));
  bool southern = s.lat < 0;
  return {southern ? s.lon - lon_delta_bottom : s.lon - lon_delta_top, s.lat - lat_delta,
          southern ? s.lon + lon_delta_bottom : s.lon + lon_delta_top, s.lat + lat_delta};
}

}  // namespace

bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, HashBits* out) {
  if (step > 32 || step <= 0) return false;
  if (lat_range.min == 0 && lat_range.max == 0) return false;
  if (lon_range.min == 0 && lon_range.max == 0) return false;
  if (!ValidPosition(lon, lat)) return false;
  *out = {0, static_cast<uint8_t>(step)};
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) return false;
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= static_cast<double>(uint64_t{1} << step);
  lon_offset *= static_cast<double>(uint64_t{1} << step);
  out->bits = Interleave(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  return true;
}

bool EncodeWgs84(double lon, double lat, int step, HashBits* out) { return Encode(kLonRange, kLatRange, lon, lat, step, out); }

uint64_t Align52(HashBits hash) { return hash.bits << (52 - hash.step * 2); }

double ScoreOf(double lon, double lat) {
  HashBits hash;
  EncodeWgs84(lon, lat, kStepMax, &hash);
  return static_cast<double>(Align52(hash));
}

bool Decode(HashBits hash, Area* out) { return DecodeIn(kLonRange, kLatRange, hash, out); }

void DecodeScore(double score, double* lon, double* lat) {
  Area area;
  DecodeIn(kLonRange, kLatRange, {ScoreBits(score), kStepMax}, &area);
  *lon = (area.lon.min + area.lon.max) / 2;
  if (*lon > kLonMax) *lon = kLonMax;
  if (*lon < kLonMin) *lon = kLonMin;
  *lat = (area.lat.min + area.lat.max) / 2;
  if (*lat > kLatMax) *lat = kLatMax;
  if (*lat < kLatMin) *lat = kLatMin;
}

std::string StandardHash(double lon, double lat) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  HashBits hash;
  if (!Encode({-180, 180}, {-90, 90}, lon, lat, kStepMax, &hash)) hash = {};
  std::string out(11, '0');
  // 52 bits make ten characters; the eleventh, which would need 55, is always '0'.
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(hash.bits >> (52 - (i + 1) * 5)) & 0x1F];
  return out;
}

Neighbors NeighborsOf(HashBits hash) {
  Neighbors n;
  n.east = Moved(hash, 1, 0);
  n.west = Moved(hash, -1, 0);
  n.south = Moved(hash, 0, -1);
  n.north = Moved(hash, 0, 1);
  n.north_west = Moved(hash, -1, 1);
  n.south_west = Moved(hash, -1, -1);
  n.north_east = Moved(hash, 1, 1);
  n.south_east = Moved(hash, 1, -1);
  return n;
}

int EstimateStepsByRadius(double range_meters, double lat) {
  if (range_meters == 0) return kStepMax;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    ++step;
  }
  step -= 2;  // so that the range fits the cell in most cases
  // Cells narrow towards the poles: take wider ones there.
  if (lat > 66 || lat < -66) {
    --step;
    if (lat > 80 || lat < -80) --step;
  }
  if (step < 1) step = 1;
  if (step > kStepMax) step = kStepMax;
  return step;
}

double LatitudeDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  double lon1r = DegToRad(lon1), lon2r = DegToRad(lon2);
  double v = std::sin((lon2r - lon1r) / 2);
  // On one meridian the distance is the arc between the latitudes, as Redis computes it
  // (which differs from the general formula's in the last bits).
  if (v == 0.0) return LatitudeDistance(lat1, lat2);
  double lat1r = DegToRad(lat1), lat2r = DegToRad(lat2);
  double u = std::sin((lat2r - lat1r) / 2);
  double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool WithinShape(const Shape& shape, double lon, double lat, double* distance) {
  if (shape.kind == Shape::Kind::kCircle) {
    double d = Distance(shape.lon, shape.lat, lon, lat);
    if (d > shape.radius * shape.to_meters) return false;
    *distance = d;
    return true;
  }
  // A box: the north-south distance is measured along the point's meridian, the east-west
  // one along its parallel.
  double width_m = shape.width * shape.to_meters, height_m = shape.height * shape.to_meters;
  if (LatitudeDistance(lat, shape.lat) > height_m / 2) return false;
  if (Distance(lon, lat, shape.lon, lat) > width_m / 2) return false;
  *distance = Distance(shape.lon, shape.lat, lon, lat);
  return true;
}

std::array<HashBits, 9> CoverShape(const Shape& shape) {
  std::array<double, 4> bounds = BoundingBox(shape);
  double min_lon = bounds[0], min_lat = bounds[1], max_lon = bounds[2], max_lat = bounds[3];
  // A box is covered as the circle through its corners.
  double radius_meters = shape.kind == Shape::Kind::kCircle
                             ? shape.radius
                             : std::sqrt((shape.width / 2) * (shape.width / 2) + (shape.height / 2) * (shape.height / 2));
  radius_meters *= shape.to_meters;
  int steps = EstimateStepsByRadius(radius_meters, shape.lat);

  HashBits hash;
  EncodeWgs84(shape.lon, shape.lat, steps, &hash);
  Neighbors n = NeighborsOf(hash);
  Area north, south, east, west;
  Decode(n.north, &north);
  Decode(n.south, &south);
  Decode(n.east, &east);
  Decode(n.west, &west);
  // Near a cell's edge the neighbours of the estimated step may fall short of the
  // bounding box; cells one step coarser then cover it.
  bool too_fine = north.lat.max < max_lat || south.lat.min > min_lat || east.lon.max < max_lon || west.lon.min > min_lon;
  if (steps > 1 && too_fine) {
    --steps;
    EncodeWgs84(shape.lon, shape.lat, steps, &hash);
    n = NeighborsOf(hash);
  }
  Area area;
  Decode(hash, &area);
  // Leave out the neighbours on a side where the centre cell already reaches past the box.
  if (steps >= 2) {
    if (area.lat.min < min_lat) n.south = n.south_west = n.south_east = HashBits{};
    if (area.lat.max > max_lat) n.north = n.north_east = n.north_west = HashBits{};
    if (area.lon.min < min_lon) n.west = n.south_west = n.north_west = HashBits{};
    if (area.lon.max > max_lon) n.east = n.south_east = n.north_east = HashBits{};
  }
  return {hash, n.north, n.south, n.east, n.west, n.north_east, n.north_west, n.south_east, n.south_west};
}

}  // namespace lapse::engine::geo
