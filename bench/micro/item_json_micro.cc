// Validation of item bodies (IPUT): simdjson's check of the whole document plus the member
// scan that strips id/_ts/_etag, and rendering the document IGET returns.
#include <benchmark/benchmark.h>

#include <string>

#include "engine/item_json.h"

namespace {

using namespace lapse::engine;

// A JSON object of about `size` bytes with a few typical members.
std::string Body(size_t size) {
  std::string body = "{\"ttl\":3600,\"user\":\"ann\",\"n\":12.5,\"tags\":[\"a\",\"b\"],\"d\":\"";
  while (body.size() + 2 < size) body.push_back('x');
  return body + "\"}";
}

void BM_ItemJsonParse(benchmark::State& state) {
  std::string body = Body(static_cast<size_t>(state.range(0)));
  ItemJsonParser parser;
  ParsedItem item;
  std::string detail;
  for (auto _ : state) {
    ItemJsonError e = parser.Parse("item-1", body, &item, &detail);
    benchmark::DoNotOptimize(e);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ItemJsonParse)->Arg(100)->Arg(1024)->Arg(64 * 1024);

void BM_ItemRender(benchmark::State& state) {
  std::string body = Body(static_cast<size_t>(state.range(0)));
  ItemJsonParser parser;
  ParsedItem item;
  std::string detail;
  parser.Parse("item-1", body, &item, &detail);
  std::string out;
  for (auto _ : state) {
    out.clear();
    RenderItem("item-1", item.members, 1'700'000'000, 0x1234, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ItemRender)->Arg(1024);

}  // namespace
