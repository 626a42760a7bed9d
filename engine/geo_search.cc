// File: engine/geo_search.cc
//
// See geo_search.h.
#include "engine/geo_search.h"

#include <array>

#include "engine/redis_sort.h"
#include "engine/zset.h"

namespace lapse::engine::geo {
namespace {

// Appends the members of `cell` that lie in the shape, in the set's order, until `limit`
// points are found (0: no limit).
void CollectCell(const Entry* e, HashBits cell, const Shape& shape, size_t limit, std::vector<Point>* out) {
  // The cell's members are the scores in [min, max).
  auto min = static_cast<double>(Align52(cell));
  HashBits next = cell;
  ++next.bits;
  auto max = static_cast<double>(Align52(next));
  size_t first = zset::PartitionPoint(e, [&](double s, std::string_view) { return s < min; });
  if (first >= zset::Size(e)) return;
  zset::Walk(e, first, false, [&](std::string_view member, double score) {
    if (!(score < max)) return false;
    Point p{std::string(), score};
    DecodeScore(score, &p.lon, &p.lat);
    if (WithinShape(shape, p.lon, p.lat, &p.dist)) {
      p.member = std::string(member);
      out->push_back(std::move(p));
    }
    return limit == 0 || out->size() < limit;
  });
}

}  // namespace

std::vector<Point> FindInShape(const Entry* e, const Shape& shape, size_t limit) {
  std::array<HashBits, 9> cells = CoverShape(shape);
  std::vector<Point> found;
  // Huge shapes may repeat a cell: one equal to the last searched is skipped. As in Redis,
  // "last searched" is unset while only the centre has been, so a neighbour equal to the
  // centre would be searched again.
  size_t last = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].IsNone()) continue;
    if (last != 0 && cells[i] == cells[last]) continue;
    if (limit != 0 && found.size() >= limit) break;
    CollectCell(e, cells[i], shape, limit, &found);
    last = i;
  }
  return found;
}

void SortByDistance(std::vector<Point>& points, SortOrder order, size_t wanted) {
  if (order == SortOrder::kNone || points.empty() || wanted == 0) return;
  // qsort's comparator, as Redis writes it: a NaN distance is "less" both ways.
  auto cmp = [order](const Point& a, const Point& b) {
    int c = a.dist > b.dist ? 1 : a.dist == b.dist ? 0 : -1;
    return order == SortOrder::kAsc ? c : -c;
  };
  if (wanted >= points.size()) {
    MergeSort(points, cmp);
  } else {
    PartialQuickSort(points, 0, wanted - 1, cmp);
  }
}

}  // namespace lapse::engine::geo
