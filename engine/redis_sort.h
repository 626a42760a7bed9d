// File: engine/redis_sort.h
//
// The two sorts that decide the order of Redis's GEO search replies, reproduced step by
// step because elements that compare equal (two members at one distance) come out in
// whatever order the algorithm leaves them: another sort would answer the same members in
// another order.
//
//  - MergeSort: glibc's qsort, which Redis calls to sort all candidates, is a top-down merge
//    sort (the first half is n / 2 elements; a merge takes from the left run on a tie). So
//    it is stable; reproducing its splits also keeps its answer for a comparator that is not
//    a strict order (a NaN distance compares below everything, both ways).
//  - PartialQuickSort: Redis's pqsort, used when COUNT asks for fewer than all candidates:
//    Bentley and McIlroy's quicksort ("Engineering a Sort Function", as in NetBSD's qsort)
//    that skips the partitions lying wholly outside the ranks asked for. Its pivot (median
//    of three, or of three medians past 40 elements), its split into
//    equal | less | greater | equal, the swaps that gather the equal ones in the middle, and
//    its insertion sort for fewer than 7 elements are all kept. (Redis 7.0's copy has no
//    switch to insertion sort after a pass that swapped nothing, unlike NetBSD's and later
//    Redis's, so neither has this one.)
//
// Comparators return <0, 0 or >0, as qsort's do. MergeSort costs O(n log n) time and O(n)
// extra space; PartialQuickSort O(n log n) expected, O(n^2) on adversarial input, which only
// the distances of members the client stored itself could provide.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace lapse::engine {

template <typename T, typename Cmp>
void MergeSort(std::vector<T>& v, Cmp cmp) {
  std::vector<T> tmp(v.size());
  auto sort = [&](auto& self, size_t first, size_t n) -> void {
    if (n <= 1) return;
    size_t n1 = n / 2, n2 = n - n1;
    self(self, first, n1);
    self(self, first + n1, n2);
    size_t a = first, b = first + n1, out = 0;
    while (n1 > 0 && n2 > 0) {
      if (cmp(v[a], v[b]) <= 0) {
        tmp[out++] = std::move(v[a++]);
        --n1;
      } else {
        tmp[out++] = std::move(v[b++]);
        --n2;
      }
    }
    // What is left of the right run is already in place.
    while (n1 > 0) tmp[out++] = std::move(v[a++]), --n1;
    for (size_t i = 0; i < out; ++i) v[first + i] = std::move(tmp[i]);
  };
  sort(sort, 0, v.size());
}

// Sorts v so that ranks [first, last] hold what a full sort would put there (up to the
// order of equal elements, which is pqsort's); other ranks end up in no particular order.
// `cmp(a, b)` returns <0, 0 or >0 as qsort's comparator does.
template <typename T, typename Cmp>
void PartialQuickSort(std::vector<T>& v, size_t first, size_t last, Cmp cmp) {
  using Index = std::ptrdiff_t;
  auto lo_rank = static_cast<Index>(first), hi_rank = static_cast<Index>(last);
  auto at = [&](Index base, Index i) -> T& { return v[static_cast<size_t>(base + i)]; };
  auto swap_at = [&](Index base, Index i, Index j) { std::swap(at(base, i), at(base, j)); };
  auto insertion_sort = [&](Index base, Index n) {
    for (Index m = 1; m < n; ++m) {
      for (Index l = m; l > 0 && cmp(at(base, l - 1), at(base, l)) > 0; --l) swap_at(base, l, l - 1);
    }
  };
  auto median3 = [&](Index base, Index a, Index b, Index c) {
    return cmp(at(base, a), at(base, b)) < 0
               ? (cmp(at(base, b), at(base, c)) < 0 ? b : (cmp(at(base, a), at(base, c)) < 0 ? c : a))
               : (cmp(at(base, b), at(base, c)) > 0 ? b : (cmp(at(base, a), at(base, c)) < 0 ? a : c));
  };
  // Whether the n elements from `base` hold any of the wanted ranks.
  auto wanted = [&](Index base, Index n) { return !(hi_rank < base || lo_rank >= base + n); };
  // Swaps the n elements from i with the n elements from j.
  auto swap_runs = [&](Index base, Index i, Index j, Index n) {
    for (Index k = 0; k < n; ++k) swap_at(base, i + k, j + k);
  };

  auto sort = [&](auto& self, Index base, Index n) -> void {
    for (;;) {
      if (n < 7) return insertion_sort(base, n);
      Index pm = n / 2;
      if (n > 7) {
        Index pl = 0, pn = n - 1;
        if (n > 40) {
          Index d = n / 8;
          pl = median3(base, pl, pl + d, pl + 2 * d);
          pm = median3(base, pm - d, pm, pm + d);
          pn = median3(base, pn - 2 * d, pn - d, pn);
        }
        pm = median3(base, pl, pm, pn);
      }
      swap_at(base, 0, pm);  // the pivot waits at 0
      // [1, pa) and (pd, n) gather the elements equal to the pivot, [pa, pb) the smaller
      // ones and (pc, pd] the greater ones.
      Index pa = 1, pb = 1, pc = n - 1, pd = n - 1;
      for (;;) {
        int c;
        while (pb <= pc && (c = cmp(at(base, pb), at(base, 0))) <= 0) {
          if (c == 0) swap_at(base, pa++, pb);
          ++pb;
        }
        while (pb <= pc && (c = cmp(at(base, pc), at(base, 0))) >= 0) {
          if (c == 0) swap_at(base, pc, pd--);
          --pc;
        }
        if (pb > pc) break;
        swap_at(base, pb++, pc--);
      }
      Index r = std::min(pa, pb - pa);
      swap_runs(base, 0, pb - r, r);
      r = std::min(pd - pc, n - pd - 1);
      swap_runs(base, pb, n - r, r);
      if ((r = pb - pa) > 1 && wanted(base, r)) self(self, base, r);
      if ((r = pd - pc) <= 1) return;
      base += n - r;
      n = r;
      if (!wanted(base, n)) return;
    }
  };
  if (!v.empty()) sort(sort, 0, static_cast<Index>(v.size()));
}

}  // namespace lapse::engine
