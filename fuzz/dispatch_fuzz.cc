// File: fuzz/dispatch_fuzz.cc
//
// libFuzzer target over parse + dispatch: the input is a client's byte stream, parsed by the
// real parser and executed by the real dispatcher against an in-process server (two shard
// threads, a manual clock), without sockets. It finds crashes, sanitizer reports and hangs
// anywhere a command can reach: argument parsing, the engine, the item store, the reply
// writer. Between inputs the server is flushed and its settings put back, so that one input
// (FLUSHALL aside, CONFIG SET maxmemory 1) does not blind the next ones.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine/clock.h"
#include "protocol/resp_parser.h"
#include "server/client_session.h"
#include "server/config.h"
#include "server/dispatcher.h"
#include "server/server.h"

namespace {

using namespace lapse;

struct Harness {
  server::Config config;
  engine::ManualClock clock;
  std::unique_ptr<server::Server> server;

  Harness() {
    // No SHUTDOWN (it would stop nothing here but the flag), no DEBUG (SLEEP would hang) and
    // no blocking commands outside MULTI (nothing would ever push to end their wait).
    config.LoadFromText(
        "threads 2\ndatabases 4\nrename-command SHUTDOWN \"\"\n"
        "rename-command BLPOP \"\"\nrename-command BRPOP \"\"\nrename-command BLMOVE \"\"\n"
        "rename-command BRPOPLPUSH \"\"\nrename-command BLMPOP \"\"\nrename-command BZPOPMIN \"\"\n"
        "rename-command BZPOPMAX \"\"\nrename-command BZMPOP \"\"\n");
    server = std::make_unique<server::Server>(config, clock);
    server->Start();
  }

  std::string Execute(const std::vector<std::vector<std::string_view>>& batch, server::ClientSession& session) {
    std::string out;
    server::Dispatcher dispatcher(*server, session);
    auto done = server::asio::co_spawn(
        server->shards().context(0),
        [&]() -> server::awaitable<void> { co_await dispatcher.Execute(std::span(batch), &out); }, server::asio::use_future);
    done.get();
    return out;
  }

  void Reset(server::ClientSession& session) {
    std::vector<std::string> reset = {"FLUSHALL"};
    std::vector<std::vector<std::string_view>> batch = {{reset.begin(), reset.end()}};
    Execute(batch, session);
    config.SetAll({{"maxmemory", "0"}, {"ru-per-second", "0"}, {"billing", "provisioned"}, {"timeout", "0"},
                   {"client-output-buffer-limit", "normal 0 0 0"}});
    server->ApplySettings();
  }
};

Harness& TheHarness() {
  static Harness* harness = new Harness();  // lives for the process, as libFuzzer expects
  return *harness;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Harness& h = TheHarness();
  // The first byte moves the clock, so that expiry paths are reached too.
  h.clock.Advance(static_cast<int64_t>(data[0]) * 97);
  auto info = h.server->clients().Add("fuzz:0", "fuzz:0", h.clock.NowMs());
  auto session = std::make_unique<server::ClientSession>(0, info, false);

  protocol::ParserLimits limits;
  limits.max_bulk_len = 1 << 20;
  protocol::RespParser parser(limits);
  std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::vector<std::string_view>> batch;
  std::deque<std::string> owned;  // copies: the parser's own storage lasts one call
  while (!wire.empty()) {
    size_t consumed = 0;
    std::vector<std::string_view> args;
    if (parser.Parse(wire, &consumed, &args) != protocol::ParseStatus::kOk) break;
    wire.remove_prefix(consumed);
    if (args.empty()) continue;
    for (std::string_view& a : args) a = owned.emplace_back(a);
    batch.push_back(std::move(args));
  }
  if (!batch.empty()) h.Execute(batch, *session);
  h.Reset(*session);
  h.server->clients().Remove(info->id);
  return 0;
}
