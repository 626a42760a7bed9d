// File: bench/sim/evict_sim.cc
//
// An offline simulation of eviction variants on workloads like scenario 16's (Zipf 0.99 over
// 1 M keys, 4 M GETs of warm-up then 4 M counted, set-on-miss in batches of 200; workload 2
// with every 5,000th run of 1,000 requests a scan of fresh keys), a fixed number of keys held
// instead of a byte limit. It answers what the server cannot in minutes: how close to the
// static optimum a policy can get at all. Not part of the build; a scratch tool:
//
//   g++ -O2 -std=c++20 -o /tmp/evict_sim bench/sim/evict_sim.cc
//   /tmp/evict_sim VARIANT WORKLOAD [KEYS_HELD]       # SKB=2 SKW=4: sketch size/window factors
//
// Variants: lfu (Redis's sampled LFU: 10 samples an eviction into a 16-entry pool), hrfive
// (lfu + the read history and probation queue as lapse does it), wt (W-TinyLFU: a 1% window,
// candidate against the pool's victim by sketch estimate), cnt (exact read counts since the
// start, no sketch: the best any frequency-ranked policy can learn from this trace), oracle
// (ranks by the true popularity: the loss due to sampling and set-on-miss alone).
#include <bits/stdc++.h>
using namespace std;
static uint64_t rs = 88172645463325252ull;
static inline uint64_t rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static inline double urand() { return (rnd() >> 11) * (1.0 / 9007199254740992.0); }
static inline uint64_t mix(uint64_t h) { h ^= h >> 31; h *= 0x7FB5D329728EA185ull; h ^= h >> 27; h *= 0x81DADEF4BC2DD44Dull; return h ^ (h >> 33); }

struct Sketch {
  vector<uint64_t> w; size_t blocks; uint64_t window, inc = 0;
  Sketch(size_t bytes, uint64_t win) : w(bytes / 8), blocks(bytes / 64), window(win) {}
  void loc(uint64_t key, size_t* word, unsigned* sh) const {
    uint64_t h = mix(key * 0x9E3779B97F4A7C15ull + 1);
    size_t b = (size_t)(((unsigned __int128)(h >> 32) * blocks) >> 32);
    for (unsigned i = 0; i < 4; i++) { unsigned bits = (h >> (i * 5)) & 31; word[i] = b * 8 + 2 * i + (bits & 1); sh[i] = (bits >> 1) * 4; }
  }
  void add(uint64_t k) {
    size_t wd[4]; unsigned sh[4]; loc(k, wd, sh); uint8_t c[4], m = 15;
    for (int i = 0; i < 4; i++) { c[i] = (w[wd[i]] >> sh[i]) & 15; m = min(m, c[i]); }
    if (m == 15) return;
    for (int i = 0; i < 4; i++) if (c[i] == m) w[wd[i]] += 1ull << sh[i];
    if (++inc >= window) { for (auto& x : w) x = (x >> 1) & 0x7777777777777777ull; inc /= 2; }
  }
  int est(uint64_t k) const { size_t wd[4]; unsigned sh[4]; loc(k, wd, sh); int m = 15; for (int i = 0; i < 4; i++) m = min<int>(m, (w[wd[i]] >> sh[i]) & 15); return m; }
};

int main(int argc, char** argv) {
  string variant = argv[1]; int workload = atoi(argv[2]); size_t C = argc > 3 ? atol(argv[3]) : 213000;
  double param = argc > 4 ? atof(argv[4]) : 0;
  const size_t N = 1000000, warm = 4000000, total = 8000000;
  vector<double> cum(N); double t = 0; for (size_t r = 1; r <= N; r++) { t += pow(r, -0.99); cum[r - 1] = t; }
  mt19937_64 g(16);
  vector<uint32_t> st(total); uint32_t next_scan = N + 1;
  for (size_t i = 0; i < total; i++) {
    double u = uniform_real_distribution<double>(0, t)(g);
    st[i] = (uint32_t)(lower_bound(cum.begin(), cum.end(), u) - cum.begin()) + 1;
    if (workload == 2 && i % 5000 >= 4000) st[i] = next_scan++;
  }
  // cache state
  size_t cap_keys = next_scan + 1;
  vector<uint8_t> lfu(cap_keys, 0); vector<int32_t> pos(cap_keys, -1); vector<uint32_t> resident;
  vector<uint64_t> created(cap_keys, 0); vector<uint32_t> cnt(cap_keys, 0);
  size_t sbytes = 1; while (sbytes < C * 2) sbytes <<= 1;  // 2-4 bytes a key
  Sketch sk(max<size_t>(sbytes, 64), sbytes * 4);
  if (variant.find("big") != string::npos) sk = Sketch(sbytes * 2, sbytes * 8);
  if (getenv("SKB")) sk = Sketch(sbytes * atof(getenv("SKB")), sbytes * atof(getenv("SKB")) * atof(getenv("SKW")));
  if (variant.find("long") != string::npos) sk = Sketch(sbytes, sbytes * 64);
  if (variant.find("huge") != string::npos) sk = Sketch(sbytes * 4, sbytes * 64);
  deque<uint32_t> window;   // names of recently created keys
  struct Cand { double score; uint32_t key; };
  vector<Cand> pool;
  auto inc_lfu = [&](uint32_t k) { uint8_t c = lfu[k]; if (c == 255) return; int base = c > 5 ? c - 5 : 0; if (urand() < 1.0 / (base * 10 + 1)) lfu[k] = c + 1; };
  bool hist = variant.find("hr") == 0 || variant.find("wt") == 0;
  auto score = [&](uint32_t k) -> double {  // higher = better victim
    if (variant == "lfu") return 255 - lfu[k];
    if (variant.find("oracle") == 0) return (double)k;
    if (variant.find("cnt") == 0) return 1e9 - cnt[k];
    if (variant.find("hr") == 0) return (255 - lfu[k]) * 16 + (15 - sk.est(k));
    // wt: main ranking
    if (variant.find("wtest") == 0) return (15 - sk.est(k)) * 256 + (255 - lfu[k]);
    if (variant.find("wtmix") == 0) return 1000 - (sk.est(k) + (lfu[k] - 5) * param);
    return (255 - lfu[k]) * 16 + (15 - sk.est(k));
  };
  auto remove = [&](uint32_t k) { int p = pos[k]; uint32_t last = resident.back(); resident[p] = last; pos[last] = p; resident.pop_back(); pos[k] = -1; };
  auto offer = [&](uint32_t k) {
    double s = score(k);
    for (size_t i = 0; i < pool.size(); i++) if (pool[i].key == k) { pool.erase(pool.begin() + i); break; }
    if (pool.size() == 16) { auto mn = min_element(pool.begin(), pool.end(), [](auto& a, auto& b) { return a.score < b.score; }); if (s <= mn->score) return; pool.erase(mn); }
    pool.push_back({s, k});
  };
  auto take_best = [&]() -> uint32_t {
    while (!pool.empty()) {
      auto mx = max_element(pool.begin(), pool.end(), [](auto& a, auto& b) { return a.score < b.score; });
      uint32_t k = mx->key; pool.erase(mx); if (pos[k] >= 0) return k;
    }
    return 0;
  };
  size_t wsize = max<size_t>(1, (size_t)(C * (param > 0 && variant.find("wtmix") != 0 ? param : 0.01)));
  int samples = variant.find("s20") != string::npos ? 40 : 10;
  auto sample_main = [&]() {
    for (int i = 0; i < samples; i++) { uint32_t k = resident[rnd() % resident.size()]; offer(k); }
  };
  auto evict_one = [&]() {
    if (variant == "lfu" || variant.find("hr") == 0 || variant.find("oracle") == 0 || variant.find("cnt") == 0) {
      sample_main();
      if (variant.find("hr") == 0) { for (int i = 0; i < 64 && !window.empty(); i++) { uint32_t k = window.front(); window.pop_front(); if (pos[k] >= 0) offer(k); } }
      uint32_t v = take_best(); if (!v) { v = resident[rnd() % resident.size()]; } remove(v); return;
    }
    // W-TinyLFU over sampling: while the window is over size its oldest key is the
    // candidate; the victim is the pool's best among sampled main keys.
    auto main_victim = [&]() -> uint32_t { sample_main(); uint32_t v; while ((v = take_best()) && created[v] != 0) {} return v; };
    while (!window.empty() && pos[window.front()] < 0) window.pop_front();
    if (window.size() > wsize) {
      uint32_t cand = window.front(); window.pop_front();
      uint32_t vict = main_victim();
      if (!vict) { remove(cand); return; }
      if (sk.est(cand) > sk.est(vict)) { remove(vict); created[cand] = 0; }
      else { remove(cand); offer(vict); }
      return;
    }
    uint32_t v = main_victim(); if (!v) { v = window.front(); window.pop_front(); } remove(v);
  };
  size_t hits = 0, gets = 0; uint64_t seq = 0;
  for (size_t start = 0; start < total; start += 200) {
    vector<uint32_t> missed;
    for (size_t i = start; i < min(total, start + 200); i++) {
      uint32_t k = st[i]; bool hit = pos[k] >= 0;
      if (hist) sk.add(k);
      cnt[k]++;
      if (hit) inc_lfu(k); else if (find(missed.begin(), missed.end(), k) == missed.end()) missed.push_back(k);
      if (i >= warm) { gets++; hits += hit; }
    }
    for (uint32_t k : missed) {
      if (pos[k] >= 0) continue;
      while (resident.size() >= C) evict_one();
      pos[k] = resident.size(); resident.push_back(k);
      lfu[k] = 5; created[k] = 0;
      if (variant.find("hr") == 0) { if (sk.est(k) <= 1) { lfu[k] = variant.find("five") != string::npos ? 5 : 4; window.push_back(k); if (window.size() > 4096) window.pop_front(); } }
      else if (variant != "lfu") { created[k] = ++seq; window.push_back(k); while (resident.size() < C && window.size() > wsize) { created[window.front()] = 0; window.pop_front(); } }
    }
  }
  double opt = cum[C - 1] / t * (workload == 2 ? 0.8 : 1.0);
  printf("%s w%d C=%zu p=%g: hit %.2f%% opt %.2f%% (%+.2f)\n", variant.c_str(), workload, C, param, hits * 100.0 / gets, opt * 100, hits * 100.0 / gets - opt * 100);
}
