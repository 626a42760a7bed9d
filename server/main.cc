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
#include "server/process.h"
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

  // Before any thread starts: fork() keeps only the calling one, and reading the umask
  // means changing it for a moment.
  RecordUmask();
  Supervisor supervisor = DetectSupervisor(settings.supervised);
  // As in Redis, `auto` reads back as the supervisor it found.
  if (settings.supervised == "auto" && supervisor != Supervisor::kNone) {
    config.LoadFromText(std::string("supervised ") + SupervisorName(supervisor) + "\n");
  }
  bool background = settings.daemonize && supervisor == Supervisor::kNone;
  if (background) Daemonize();
  if (background && settings.pidfile.empty()) {
    config.LoadFromText(std::string("pidfile ") + kDefaultPidFile + "\n");
    settings = config.Snapshot();
  }
  auto fail = [](const std::string& error) {
    spdlog::error("{}", error);
    return 1;
  };

  lapse::engine::SystemClock clock;
  Server server(config, clock);
  // Like Redis, with appendonly yes the log is the data set at start-up and dump.rdb is not read.
  if (!settings.appendonly) {
    if (auto err = server.persistence().LoadAtStartup()) return fail(*err);
  }
  server.Start();
  if (auto err = server.aof().LoadAndOpen()) return fail(*err);
  if (auto err = server.Listen()) return fail(*err);
  // Written once the ports are ours, as Redis writes it after binding: a second server that
  // cannot start leaves the running one's file alone. A relative path is taken from `dir`.
  std::string pidfile = settings.pidfile;
  if (!pidfile.empty() && pidfile[0] != '/') pidfile = EffectiveDir(settings) + "/" + pidfile;
  if (!pidfile.empty()) WritePidFile(pidfile);
  NoteStartupMemory();
  spdlog::info("lapse {} ready on {} with {} threads", LAPSE_VERSION, server.ListeningOn(), server.thread_count());
  NotifyReady();
  server.WaitForShutdown();
  if (!pidfile.empty()) RemovePidFile(pidfile);
  return 0;
}
