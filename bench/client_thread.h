// File: bench/client_thread.h
//
// One load-generating thread: an epoll event loop that drives --clients connections, each a
// closed loop with --pipeline requests in flight. Threads share nothing while they run (the
// compiled mix is read-only); each keeps its own histograms, merged by the caller after
// join, so measuring never takes a lock or touches a shared cache line.
//
// Timing: all requests that a connection adds in one turn of the loop go out in one write;
// their send time is taken just before that write. A reply's latency is the time at which
// the read that completed it returned, minus that send time. Both ends are therefore
// measured at the socket, and a partial write can only make latency look worse, never better.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/latency_histogram.h"
#include "bench/options.h"
#include "bench/request_builder.h"

namespace lapse::bench {

// What one command type did, overall or in one second.
struct CommandFigures {
  LatencyHistogram latency;
  uint64_t errors = 0;

  void Merge(const CommandFigures& other) {
    latency.Merge(other.latency);
    errors += other.errors;
  }
};

struct ThreadResult {
  std::vector<CommandFigures> commands;  // by template index
  // timeline[s][template]: replies whose read completed in second s after the start.
  std::vector<std::vector<CommandFigures>> timeline;
  uint64_t first_send_ns = 0;
  uint64_t last_reply_ns = 0;
  uint64_t connection_errors = 0;
  std::string error;  // set when the thread could not run at all (connect failed)
};

// Monotonic clock in nanoseconds, shared by every thread.
uint64_t NowNs();

// Connects to the server (TCP_NODELAY), sends HELLO 3 first under --protocol resp3 and
// waits for its answer, then makes the socket non-blocking. Returns the descriptor, or -1
// with *error set.
int OpenConnection(const BenchOptions& options, std::string* error);

// Drives the connections `fds` (taken over: closed on return) until their requests are
// done or `deadline_ns` passed (0: none), then waits for the replies in flight.
// `first_slice` is the sequential-pattern slice of fds[0] (of threads * clients slices).
// `start_ns` is the common time origin of the timeline. Never throws.
ThreadResult RunClientThread(const BenchOptions& options, const CommandMix& mix, std::vector<int> fds,
                             uint64_t first_slice, uint64_t start_ns, uint64_t deadline_ns);

}  // namespace lapse::bench
