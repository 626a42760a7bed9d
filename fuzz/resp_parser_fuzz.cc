// File: fuzz/resp_parser_fuzz.cc
//
// libFuzzer target over the RESP parser alone. The input is fed in fragments whose sizes the
// input itself chooses (its first byte), the way a socket delivers bytes, and the parser is
// held to its contract: it consumes only what it was given, never reports progress with
// kNeedMore, hands back arguments that point into the input (or its own storage for
// unescaped inline arguments), and, after an error, starts clean once Reset.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/resp_parser.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// Parses everything `wire` holds when it arrives `step` bytes at a time; returns the
// commands seen, flattened, so that two deliveries can be compared.
std::string ParseInSteps(std::string_view wire, size_t step, const lapse::protocol::ParserLimits& limits) {
  lapse::protocol::RespParser parser(limits);
  std::string buffer, seen;
  std::vector<std::string_view> args;
  size_t fed = 0;
  while (true) {
    size_t consumed = 0;
    auto status = parser.Parse(buffer, &consumed, &args);
    if (status == lapse::protocol::ParseStatus::kError) {
      Check(!parser.error().empty());
      seen += "!" + parser.error();
      return seen;
    }
    if (status == lapse::protocol::ParseStatus::kOk) {
      Check(consumed > 0 && consumed <= buffer.size());
      seen += "*" + std::to_string(args.size());
      for (std::string_view a : args) seen += "|" + std::string(a);
      buffer.erase(0, consumed);
      continue;
    }
    Check(consumed == 0);
    if (fed == wire.size()) return seen;
    size_t n = std::min(step, wire.size() - fed);
    buffer.append(wire.substr(fed, n));
    fed += n;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  lapse::protocol::ParserLimits limits;
  limits.max_bulk_len = 1 << 20;
  limits.max_multibulk_len = 1 << 12;
  limits.unauthenticated = (data[0] & 0x80) != 0;
  size_t step = 1 + (data[0] & 0x0f);
  std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  // However the bytes arrive, the same commands (and the same error) come out.
  std::string whole = ParseInSteps(wire, wire.size() + 1, limits);
  std::string pieces = ParseInSteps(wire, step, limits);
  Check(whole == pieces);
  return 0;
}
