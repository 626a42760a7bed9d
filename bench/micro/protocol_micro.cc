// Protocol hot paths: parsing pipelined requests (what every connection does per read),
// writing the replies GET and SET produce, and framing replies (what lapse-bench does per
// read, so that the load generator is known not to be the bottleneck). Throughput is
// reported in bytes and items (commands or replies) per second.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "protocol/reply_reader.h"
#include "protocol/reply_writer.h"
#include "protocol/resp_parser.h"

namespace {

using namespace lapse::protocol;

std::string Command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// `count` pipelined commands, one SET (value of `value_size` bytes) per ten GETs.
std::string PipelinedMix(size_t count, size_t value_size) {
  std::string wire;
  for (size_t i = 0; i < count; ++i) {
    std::string key = "memtier-" + std::to_string(1000000 + i);
    wire += i % 11 == 0 ? Command({"SET", key, std::string(value_size, 'v')}) : Command({"GET", key});
  }
  return wire;
}

void BM_RespParsePipelined(benchmark::State& state) {
  std::string wire = PipelinedMix(static_cast<size_t>(state.range(0)), 100);
  RespParser parser;
  std::vector<std::string_view> args;
  for (auto _ : state) {
    std::string_view rest = wire;
    size_t consumed;
    while (!rest.empty() && parser.Parse(rest, &consumed, &args) == ParseStatus::kOk) rest.remove_prefix(consumed);
    benchmark::DoNotOptimize(args.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wire.size()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RespParsePipelined)->Arg(1)->Arg(16)->Arg(256);

// A 1 MiB SET arriving in reads of `piece` bytes: the parser resumes where it stopped and
// only length-checks the payload, so the cost is per read call, not per byte (the
// bytes_per_second figure is therefore far above memory bandwidth, by design).
void BM_RespParseLargeBulkInPieces(benchmark::State& state) {
  std::string wire = Command({"SET", "k", std::string(1 << 20, 'v')});
  const size_t piece = static_cast<size_t>(state.range(0));
  RespParser parser;
  std::vector<std::string_view> args;
  int64_t calls = 0;
  for (auto _ : state) {
    size_t consumed = 0;
    for (size_t fed = piece; consumed == 0; fed += piece) {
      parser.Parse(std::string_view(wire).substr(0, std::min(fed, wire.size())), &consumed, &args);
      ++calls;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wire.size()));
  state.counters["parse_calls_per_second"] = benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RespParseLargeBulkInPieces)->Arg(16 * 1024)->Arg(64 * 1024);

void BM_ReplyWriteBulk(benchmark::State& state) {
  std::string value(static_cast<size_t>(state.range(0)), 'v');
  std::string out;
  ReplyWriter writer(&out);
  for (auto _ : state) {
    out.clear();
    for (int i = 0; i < 16; ++i) writer.Bulk(value);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 16);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 16 * value.size()));
}
BENCHMARK(BM_ReplyWriteBulk)->Arg(3)->Arg(100)->Arg(1024);

void BM_ReplyWriteOkAndIntegers(benchmark::State& state) {
  std::string out;
  ReplyWriter writer(&out);
  for (auto _ : state) {
    out.clear();
    for (int64_t i = 0; i < 16; ++i) {
      writer.Ok();
      writer.Integer(i * 1234567);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 32);
}
BENCHMARK(BM_ReplyWriteOkAndIntegers);

void BM_ReplyReaderFraming(benchmark::State& state) {
  std::string wire;
  ReplyWriter writer(&wire);
  for (int i = 0; i < 256; ++i) {
    if (i % 11 == 0) writer.Ok();
    else writer.Bulk(std::string(100, 'v'));
  }
  ReplyReader reader;
  for (auto _ : state) {
    std::string_view rest = wire;
    size_t consumed;
    ReplyType type;
    while (!rest.empty() && reader.Next(rest, &consumed, &type) == ReplyStatus::kOk) rest.remove_prefix(consumed);
    benchmark::DoNotOptimize(type);
  }
  state.SetItemsProcessed(state.iterations() * 256);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wire.size()));
}
BENCHMARK(BM_ReplyReaderFraming);

}  // namespace
