#include "server/log_level.h"

namespace lapse::server {

spdlog::level::level_enum SpdlogLevel(std::string_view loglevel) {
  if (loglevel == "debug") return spdlog::level::debug;
  if (loglevel == "verbose") return spdlog::level::info;
  if (loglevel == "warning") return spdlog::level::warn;
  if (loglevel == "nothing") return spdlog::level::off;
  return spdlog::level::info;  // notice
}

}  // namespace lapse::server
