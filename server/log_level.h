// File: server/log_level.h
//
// Redis's loglevel names as spdlog levels. main.cc applies it at start-up and
// Server::ApplySettings after CONFIG SET loglevel, so both use the same mapping.
#pragma once

#include <spdlog/common.h>

#include <string_view>

namespace lapse::server {

// debug -> debug, verbose and notice -> info, warning -> warn, nothing -> off. Config only
// accepts those five names (lower-cased); anything else is taken as notice.
spdlog::level::level_enum SpdlogLevel(std::string_view loglevel);

}  // namespace lapse::server
