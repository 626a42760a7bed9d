// File: server/process.h
//
// How the lapse process fits into the system that runs it, as Redis 7.0 does it:
//
// - `daemonize yes` forks before any thread starts; the parent exits 0 at once and the child
//   leaves the terminal's session with its standard streams on /dev/null (a log file, when
//   set, keeps logging). It is skipped when a supervisor was found, since supervisors want
//   the process they started.
// - `pidfile` receives the process id once the listeners are bound, and is removed when the
//   server stops. A daemonized server without one writes kDefaultPidFile.
// - `supervised systemd` (or `auto` with NOTIFY_SOCKET set) tells systemd "READY=1" once
//   clients can connect and "STOPPING=1" when shutting down, for units of Type=notify; it is
//   supervised only if a first status message reaches systemd.
//   `supervised upstart` (or `auto` with UPSTART_JOB set) stops the process with SIGSTOP
//   once, which upstart's "expect stop" takes as the sign of readiness.
#pragma once

#include <string>
#include <string_view>

namespace lapse::server {

// Redis writes /var/run/redis.pid; lapse uses its own name so as not to clash with a
// redis-server on the same machine.
inline constexpr const char* kDefaultPidFile = "/var/run/lapse.pid";

enum class Supervisor { kNone, kUpstart, kSystemd };

// The supervisor `supervised` (upstart, systemd, auto or no) names and the environment
// confirms; kNone, with a warning logged, when its variable is missing. Call once at start-up
// (upstart's stop happens here, as in Redis).
Supervisor DetectSupervisor(std::string_view setting);
// What INFO's process_supervised shows.
const char* SupervisorName(Supervisor supervisor);
Supervisor CurrentSupervisor();

// Forks into the background (see above); returns in the child only.
void Daemonize();

// Writes the process id to `path`; a failure is logged and start-up goes on, as in Redis.
void WritePidFile(const std::string& path);
void RemovePidFile(const std::string& path);

// The umask the process started with, read once by RecordUmask before any thread runs
// (reading it means setting it, which would race other threads' file creation).
void RecordUmask();
unsigned StartupUmask();

// Messages for the supervisor, if it is systemd.
void NotifyReady();
void NotifyStopping();

}  // namespace lapse::server
