// File: bench/request_builder.h
//
// Turns the command mix of the options into RESP request bytes, one request at a time,
// straight into a connection's output buffer. Everything that does not change between
// requests (literal arguments, a fixed value) is encoded once when the mix is compiled, so
// a request costs a few appends: the load generator must not be what limits the server.
//
// Which command comes next follows the ratio as a fixed cycle (1:10 is one SET among every
// eleven requests, as in memtier), so every connection issues the same mix at every moment.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/options.h"

namespace lapse::bench {

// One --command (or the default SET / GET), compiled.
struct CommandTemplate {
  enum class ArgKind { kLiteral, kKey, kData };
  struct Arg {
    ArgKind kind;
    std::string encoded;  // kLiteral: the whole "$n\r\n...\r\n"
  };
  std::string name;  // the command word, upper case; names the latency histogram
  std::vector<Arg> args;
  bool json_data = false;   // __data__ is a JSON object
  bool add_expiry = false;  // append EX n drawn from --expiry-range (the default SET only)
  std::string fixed_data;   // encoded __data__ when it never varies; empty when drawn per request
};

// The compiled mix shared, read-only, by every connection.
struct CommandMix {
  std::vector<CommandTemplate> templates;
  std::vector<uint32_t> schedule;  // template indices, one cycle of the ratio
};

// Compiles the options' templates (or the default SET/GET mix). Returns an error message,
// empty on success.
std::string CompileMix(const BenchOptions& options, CommandMix* mix);

// A JSON object of exactly `size` bytes (or the smallest that fits the skeleton), with a
// "ttl" property when ttl_s > 0: {"ttl":60,"d":"xxxx"}.
std::string JsonBody(size_t size, int64_t ttl_s);

// Per connection: picks keys and the next command, and encodes requests.
class RequestBuilder {
 public:
  // `slice` of `slices`: this connection's share of the key range under the sequential
  // pattern, so that N connections loading N * requests keys write each key once.
  RequestBuilder(const BenchOptions& options, const CommandMix& mix, uint64_t slice, uint64_t slices);

  // Appends the next request to `out` and returns its template index.
  uint32_t AppendNext(std::string* out);

 private:
  uint64_t NextKey();
  void AppendKey(uint64_t key, std::string* out);
  void AppendData(const CommandTemplate& t, std::string* out);
  int64_t Draw(int64_t min, int64_t max);

  const BenchOptions& options_;
  const CommandMix& mix_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> gaussian_;
  uint64_t slice_first_;
  uint64_t slice_size_;
  uint64_t sequence_ = 0;
  size_t schedule_pos_ = 0;
  std::string scratch_;
};

}  // namespace lapse::bench
