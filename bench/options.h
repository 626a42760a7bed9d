// File: bench/options.h
//
// The command line of lapse-bench. The option names and defaults follow memtier_benchmark
// where memtier has the option, so that a memtier command line carries over; the few
// additions (--command with __data__ as JSON, --ttl-range, --data-json) exist for lapse's
// container commands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lapse::bench {

enum class KeyPattern { kRandom, kSequential, kGaussian };

struct BenchOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  int threads = 4;
  int clients = 50;  // per thread
  int pipeline = 1;
  uint64_t requests = 10000;  // per client; ignored when test_time_s > 0
  double test_time_s = 0;
  uint32_t set_ratio = 1;
  uint32_t get_ratio = 10;
  KeyPattern key_pattern = KeyPattern::kRandom;
  std::string key_prefix = "memtier-";
  uint64_t key_minimum = 0;
  uint64_t key_maximum = 10'000'000;
  size_t data_size = 32;
  bool data_json = false;     // __data__ as a JSON object everywhere, not only for IPUT
  int64_t expiry_min_s = 0;   // --expiry-range; 0-0 means no expiry
  int64_t expiry_max_s = 0;
  int64_t ttl_min_s = 0;      // --ttl-range for JSON bodies; 0-0 means no "ttl" property
  int64_t ttl_max_s = 0;
  int protocol = 2;  // 2 or 3
  std::vector<std::string> commands;
  std::vector<uint32_t> command_ratio;
  std::string json_out;
  uint64_t seed = 1;
};

// Parses argv. Returns an error message, or nullopt. Sets *exit_now after --help.
std::optional<std::string> ParseOptions(int argc, char** argv, BenchOptions* out, bool* exit_now);

std::string Usage();

}  // namespace lapse::bench
