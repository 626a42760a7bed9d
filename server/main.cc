// lapse-server: parses the configuration, sets up logging, starts the shards and the
// listener, and waits for SHUTDOWN or a signal.
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <iostream>

#include "engine/clock.h"
#include "server/config.h"
#include "server/log_level.h"
#include "server/memory.h"
#include "server/server.h"

int main(int argc, char** argv) {
  using namespace lapse::server;
  Config config;
  bool exit_now = false;
  if (auto err = config.LoadFromArgs(argc, argv, &exit_now)) {
    std::cerr << "lapse-server: " << *err << "\n\n" << Config::Usage();
    return 2;
  }
  if (exit_now) return 0;
  Settings settings = config.Snapshot();
  try {
    if (!settings.logfile.empty()) {
      spdlog::set_default_logger(spdlog::basic_logger_mt("lapse", settings.logfile));
    }
  } catch (const spdlog::spdlog_ex& e) {
    std::cerr << "lapse-server: cannot open log file: " << e.what() << "\n";
    return 2;
  }
  spdlog::set_level(SpdlogLevel(settings.loglevel));
  spdlog::flush_on(spdlog::level::info);
  std::signal(SIGPIPE, SIG_IGN);

  lapse::engine::SystemClock clock;
  Server server(config, clock);
  // Like Redis, with appendonly yes the log is the data set at start-up and dump.rdb is not read.
  if (!settings.appendonly) {
    if (auto err = server.persistence().LoadAtStartup()) {
      spdlog::error("{}", *err);
      return 1;
    }
  }
  server.Start();
  if (auto err = server.aof().LoadAndOpen()) {
    spdlog::error("{}", *err);
    return 1;
  }
  if (auto err = server.Listen()) {
    spdlog::error("{}", *err);
    return 1;
  }
  NoteStartupMemory();
  if (server.tls_port() != 0) {
    spdlog::info("lapse {} ready on {} port {} and TLS port {} with {} threads", LAPSE_VERSION, settings.bind,
                 server.port(), server.tls_port(), server.thread_count());
  } else {
    spdlog::info("lapse {} ready on {}:{} with {} threads", LAPSE_VERSION, settings.bind, server.port(),
                 server.thread_count());
  }
  server.WaitForShutdown();
  return 0;
}
