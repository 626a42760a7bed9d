// File: tests/server/test_server.h
//
// Runs commands through the real command table and dispatcher, in-process and without
// sockets: a TestServer owns the shard threads and a manual clock; Run() executes one
// pipelined batch for a session on thread 0 and returns the exact reply bytes.
#pragma once

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "engine/clock.h"
#include "server/client_session.h"
#include "server/config.h"
#include "server/dispatcher.h"
#include "server/server.h"

namespace lapse::server::testing {

class TestServer {
 public:
  explicit TestServer(int threads = 1, std::vector<std::pair<std::string, std::string>> settings = {}) {
    config_.Set("threads", std::to_string(threads));
    // No `save` rules unless a test sets some: FLUSHALL under rules saves at once, and these
    // servers must not write dump.rdb into the directory the tests run from.
    config_.LoadFromText("save \"\"\n");
    for (auto& [k, v] : settings) {
      // At start-up every option is settable; reuse the file parser for immutable ones.
      config_.LoadFromText(k + " \"" + v + "\"\n");
    }
    config_.LoadFromText("threads " + std::to_string(threads) + "\n");
    server_ = std::make_unique<Server>(config_, clock_);
    server_->Start();
    session_ = NewSession();
  }

  std::unique_ptr<ClientSession> NewSession() {
    auto info = server_->clients().Add("test:0", "test:0", clock_.NowMs());
    return std::make_unique<ClientSession>(0, info, !server_->config().requirepass().empty());
  }

  // Executes a pipelined batch and returns the concatenated replies.
  std::string RunBatch(const std::vector<std::vector<std::string>>& commands, ClientSession* session = nullptr) {
    if (session == nullptr) session = session_.get();
    std::vector<std::vector<std::string_view>> batch;
    for (auto& cmd : commands) batch.emplace_back(cmd.begin(), cmd.end());
    std::string out;
    Dispatcher dispatcher(*server_, *session);
    auto done = asio::co_spawn(
        server_->shards().context(0),
        [&]() -> awaitable<void> { co_await dispatcher.Execute(std::span(batch), &out); }, asio::use_future);
    done.get();
    return out;
  }

  std::string Run(std::vector<std::string> command, ClientSession* session = nullptr) {
    return RunBatch({std::move(command)}, session);
  }

  engine::ManualClock& clock() { return clock_; }
  Server& server() { return *server_; }
  ClientSession& session() { return *session_; }

 private:
  Config config_;
  engine::ManualClock clock_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ClientSession> session_;
};

// RESP helpers for expectations.
inline std::string Bulk(std::string_view s) { return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n"; }
inline std::string Int(long long n) { return ":" + std::to_string(n) + "\r\n"; }
inline std::string Err(std::string_view s) { return "-" + std::string(s) + "\r\n"; }
inline const std::string kOk = "+OK\r\n";
inline const std::string kNil = "$-1\r\n";

}  // namespace lapse::server::testing
