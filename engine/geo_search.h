// File: engine/geo_search.h
//
// A geo search over a sorted set whose scores are geohashes (engine/geohash.h), as Redis
// 7.0.15 runs it, so that lapse answers the same members in the same order.
//
// FindInShape visits the nine cells CoverShape chooses, in its order, and in each cell the
// members whose scores fall in the cell's range, in the set's (score, member) order: one
// PartitionPoint to the cell's first score, then a walk until its last. Each candidate's
// position is decoded and kept when it lies in the shape. So the cost is O(9 log n) plus the
// candidates of the nine cells, which are about the shape's size (a cell is about as wide as
// the radius), not the set's.
//
// SortByDistance then orders the points as Redis does: all of them with glibc's qsort (a
// stable merge sort), or with Redis's partial quicksort when only the nearest (or farthest)
// few are wanted, since points at equal distances come out in whatever order that sort
// leaves them (engine/redis_sort.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/entry.h"
#include "engine/geohash.h"

namespace lapse::engine::geo {

// A member found by a search.
struct Point {
  std::string member;
  double score = 0;
  double lon = 0, lat = 0;  // decoded from the score
  double dist = 0;          // metres from the shape's centre
};

// The members of sorted set `e` that lie in `shape`, in the order Redis finds them; the
// search stops once `limit` are found (0: no limit).
std::vector<Point> FindInShape(const Entry* e, const Shape& shape, size_t limit);

enum class SortOrder { kNone, kAsc, kDesc };

// Orders points by distance so that the first `wanted` are what Redis answers (all of them
// when `wanted` is points.size()); kNone leaves them as found.
void SortByDistance(std::vector<Point>& points, SortOrder order, size_t wanted);

}  // namespace lapse::engine::geo
