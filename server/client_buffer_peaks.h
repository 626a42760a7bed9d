// File: server/client_buffer_peaks.h
//
// INFO clients' client_recent_max_input_buffer and client_recent_max_output_buffer: the
// biggest query and output buffers any client had in the last few seconds, kept as Redis
// keeps them (CLIENTS_PEAK_MEM_USAGE_SLOTS): one slot per second in a ring of kSlots, each
// holding that second's largest figures, so INFO takes the maximum of kSlots numbers instead
// of visiting every client.
//
// One per event-loop thread: only that thread's connections note their buffers (after each
// read, before each write, and once a second from their watchdog, so an idle client's kept
// buffer is seen as Redis's clientsCron sees it), with relaxed stores; INFO reads from any
// thread. A slot is recognised by the second it was filled in, so slots left from a quiet
// while are ignored rather than cleared. A reader racing a slot's reuse may see one figure
// of the second before: harmless for a figure that is approximate by design.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace lapse::server {

class ClientBufferPeaks {
 public:
  static constexpr int64_t kSlots = 8;  // seconds remembered, Redis's figure

  // Notes one client's buffers now. The owning thread only.
  void Note(uint64_t input_bytes, uint64_t output_bytes) {
    int64_t second = NowSeconds();
    Slot& slot = slots_[static_cast<size_t>(second % kSlots)];
    if (slot.second.load(std::memory_order_relaxed) != second) {
      slot.input.store(input_bytes, std::memory_order_relaxed);
      slot.output.store(output_bytes, std::memory_order_relaxed);
      slot.second.store(second, std::memory_order_relaxed);
      return;
    }
    Raise(slot.input, input_bytes);
    Raise(slot.output, output_bytes);
  }

  struct Peaks {
    uint64_t input = 0, output = 0;
  };
  // The largest figures of the last kSlots seconds; from any thread.
  Peaks Recent() const {
    int64_t now = NowSeconds();
    Peaks peaks;
    for (const Slot& slot : slots_) {
      if (now - slot.second.load(std::memory_order_relaxed) >= kSlots) continue;
      peaks.input = std::max(peaks.input, slot.input.load(std::memory_order_relaxed));
      peaks.output = std::max(peaks.output, slot.output.load(std::memory_order_relaxed));
    }
    return peaks;
  }

 private:
  struct Slot {
    std::atomic<int64_t> second{-kSlots};  // never filled: older than any window
    std::atomic<uint64_t> input{0}, output{0};
  };
  static int64_t NowSeconds() {
    using namespace std::chrono;
    return duration_cast<seconds>(steady_clock::now().time_since_epoch()).count();
  }
  static void Raise(std::atomic<uint64_t>& peak, uint64_t value) {
    if (value > peak.load(std::memory_order_relaxed)) peak.store(value, std::memory_order_relaxed);
  }
  std::array<Slot, kSlots> slots_{};
};

}  // namespace lapse::server
