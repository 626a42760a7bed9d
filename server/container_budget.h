// File: server/container_budget.h
//
// The request-unit budget check that every container command runs before its work, shared
// by the container family (container_commands.cc, where it lives) and the change feed
// (change_feed_commands.cc).
#pragma once

#include <memory>

#include "server/command_table.h"

namespace lapse::engine {
struct ContainerInfo;
}

namespace lapse::server {

// For a command that does not hold the container's shard. `info` may be null (no such
// container: never throttled); otherwise the charge holds it, so that it is charged even if
// dropped meanwhile. A container with its own provisioned budget answers requests beyond it
// with Cosmos DB's 429, here a THROTTLED error, and the request changes nothing; returns true
// then, having replied.
bool ThrottledFanout(ConnCommand& c, const std::shared_ptr<engine::ContainerInfo>& info);

}  // namespace lapse::server
