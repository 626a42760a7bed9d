#include "server/process.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lapse::server {

namespace {

std::atomic<Supervisor> current_supervisor{Supervisor::kNone};

// One datagram to NOTIFY_SOCKET, as sd_notify sends it; '@' names an abstract socket.
// False when it could not be sent.
bool TellSystemd(std::string_view message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  size_t length = std::strlen(path);
  if (length >= sizeof address.sun_path) {
    spdlog::warn("Can't notify systemd: NOTIFY_SOCKET is too long");
    return false;
  }
  std::memcpy(address.sun_path, path, length);
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    spdlog::warn("Can't connect to systemd socket {}: {}", path, std::strerror(errno));
    return false;
  }
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  bool sent =
      ::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&address), size) >= 0;
  if (!sent) spdlog::warn("Can't send notification to systemd: {}", std::strerror(errno));
  ::close(fd);
  return sent;
}

}  // namespace

Supervisor DetectSupervisor(std::string_view setting) {
  Supervisor wanted = Supervisor::kNone;
  if (setting == "upstart") wanted = Supervisor::kUpstart;
  if (setting == "systemd") wanted = Supervisor::kSystemd;
  if (setting == "auto") {
    if (std::getenv("UPSTART_JOB") != nullptr) wanted = Supervisor::kUpstart;
    else if (std::getenv("NOTIFY_SOCKET") != nullptr) wanted = Supervisor::kSystemd;
  }
  if (wanted == Supervisor::kUpstart) {
    if (std::getenv("UPSTART_JOB") == nullptr) {
      spdlog::warn("upstart supervision requested, but UPSTART_JOB not found!");
      return Supervisor::kNone;
    }
    spdlog::info("supervised by upstart, will stop to signal readiness.");
    std::raise(SIGSTOP);
    ::unsetenv("UPSTART_JOB");
  }
  if (wanted == Supervisor::kSystemd) {
    if (std::getenv("NOTIFY_SOCKET") == nullptr) {
      spdlog::warn("systemd supervision requested or auto-detected, but NOTIFY_SOCKET environment variable not found!");
      return Supervisor::kNone;
    }
    // As Redis: supervised only if systemd hears us.
    if (!TellSystemd("STATUS=lapse is loading...\n")) return Supervisor::kNone;
    spdlog::info("supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and "
                 "TimeoutStopSec in your service unit.");
  }
  current_supervisor.store(wanted);
  return wanted;
}

const char* SupervisorName(Supervisor supervisor) {
  switch (supervisor) {
    case Supervisor::kUpstart:
      return "upstart";
    case Supervisor::kSystemd:
      return "systemd";
    case Supervisor::kNone:
      break;
  }
  return "no";
}

Supervisor CurrentSupervisor() { return current_supervisor.load(); }

void Daemonize() {
  pid_t child = ::fork();
  if (child < 0) {
    spdlog::error("fork failed: {}", std::strerror(errno));
    std::exit(1);
  }
  if (child > 0) std::_Exit(0);  // nothing of the parent's is flushed or destroyed twice
  ::setsid();
  int null = ::open("/dev/null", O_RDWR);
  if (null < 0) return;
  ::dup2(null, STDIN_FILENO);
  ::dup2(null, STDOUT_FILENO);
  ::dup2(null, STDERR_FILENO);
  if (null > STDERR_FILENO) ::close(null);
}

void WritePidFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    spdlog::warn("Failed to write PID file: {}", std::strerror(errno));
    return;
  }
  std::fprintf(file, "%d\n", static_cast<int>(::getpid()));
  std::fclose(file);
}

void RemovePidFile(const std::string& path) {
  spdlog::info("Removing the pid file.");
  ::unlink(path.c_str());
}

namespace {
std::atomic<unsigned> startup_umask{022};
}  // namespace

void RecordUmask() {
  mode_t mask = ::umask(0777);
  ::umask(mask);
  startup_umask.store(mask);
}

unsigned StartupUmask() { return startup_umask.load(); }

void NotifyReady() {
  if (CurrentSupervisor() != Supervisor::kSystemd) return;
  TellSystemd("STATUS=Ready to accept connections\n");
  TellSystemd("READY=1\n");
}

void NotifyStopping() {
  if (CurrentSupervisor() == Supervisor::kSystemd) TellSystemd("STOPPING=1\n");
}

}  // namespace lapse::server
