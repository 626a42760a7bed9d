// lapse-bench: parses the options, opens every connection up front (so that connect and
// HELLO time is not measured), starts one event-loop thread per --threads with a common
// time origin, and reports once all threads are done. See options.cc (Usage) for what the
// figures mean.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "bench/client_thread.h"
#include "bench/options.h"
#include "bench/report.h"
#include "bench/request_builder.h"

namespace {

using namespace lapse::bench;

// Connections of every thread, threads * clients in all; empty with *error set on failure.
std::vector<std::vector<int>> OpenAll(const BenchOptions& options, std::string* error) {
  std::vector<std::vector<int>> per_thread(static_cast<size_t>(options.threads));
  for (auto& fds : per_thread) {
    for (int c = 0; c < options.clients; ++c) {
      int fd = OpenConnection(options, error);
      if (fd < 0) return {};
      fds.push_back(fd);
    }
  }
  return per_thread;
}

std::vector<ThreadResult> RunThreads(const BenchOptions& options, const CommandMix& mix,
                                     std::vector<std::vector<int>> per_thread) {
  std::vector<ThreadResult> results(per_thread.size());
  std::vector<std::thread> threads;
  uint64_t start = NowNs();
  uint64_t deadline = options.test_time_s > 0 ? start + static_cast<uint64_t>(options.test_time_s * 1e9) : 0;
  for (size_t t = 0; t < per_thread.size(); ++t) {
    uint64_t first_slice = t * static_cast<uint64_t>(options.clients);
    threads.emplace_back([&, t, first_slice] {
      results[t] = RunClientThread(options, mix, std::move(per_thread[t]), first_slice, start, deadline);
    });
  }
  for (auto& th : threads) th.join();
  return results;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions options;
  bool exit_now = false;
  if (auto err = ParseOptions(argc, argv, &options, &exit_now)) {
    std::cerr << "lapse-bench: " << *err << "\n\n" << Usage();
    return 2;
  }
  if (exit_now) {
    std::cout << Usage();
    return 0;
  }
  CommandMix mix;
  if (std::string err = CompileMix(options, &mix); !err.empty()) {
    std::cerr << "lapse-bench: " << err << "\n";
    return 2;
  }
  std::string error;
  auto connections = OpenAll(options, &error);
  if (connections.empty()) {
    std::cerr << "lapse-bench: " << error << "\n";
    return 1;
  }
  std::vector<ThreadResult> results = RunThreads(options, mix, std::move(connections));
  RunSummary summary = Summarize(mix, results);
  std::cout << RenderTable(options, summary);
  std::cout << "JSON " << RenderJson(options, summary, false) << "\n";
  if (!options.json_out.empty() && !WriteFile(options.json_out, RenderJson(options, summary, true))) {
    std::cerr << "lapse-bench: cannot write " << options.json_out << "\n";
    return 1;
  }
  return summary.connection_errors ? 1 : 0;
}
