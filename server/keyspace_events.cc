#include "server/keyspace_events.h"

#include "server/command_table.h"
#include "server/pubsub.h"
#include "server/replication.h"
#include "server/server.h"

namespace lapse::server {

namespace {
struct ClassLetter {
  char letter;
  uint32_t bit;
};
// In the order Redis writes them back.
constexpr ClassLetter kTypeLetters[] = {{'g', kEventGeneric}, {'$', kEventString}, {'l', kEventList},
                                        {'s', kEventSet},     {'h', kEventHash},   {'z', kEventZset},
                                        {'x', kEventExpired}, {'e', kEventEvicted}, {'t', kEventStream},
                                        {'d', kEventModule},  {'n', kEventNew}};
}  // namespace

std::optional<uint32_t> ParseEventClasses(std::string_view classes) {
  uint32_t mask = 0;
  for (char ch : classes) {
    switch (ch) {
      case 'A':
        mask |= kEventAll;
        continue;
      case 'K':
        mask |= kEventKeyspace;
        continue;
      case 'E':
        mask |= kEventKeyevent;
        continue;
      case 'm':
        mask |= kEventKeyMiss;
        continue;
      default:
        break;
    }
    bool known = false;
    for (const ClassLetter& c : kTypeLetters) {
      if (c.letter == ch) mask |= c.bit, known = true;
    }
    if (!known) return std::nullopt;
  }
  return mask;
}

std::string FormatEventClasses(uint32_t mask) {
  std::string out;
  if ((mask & kEventAll) == kEventAll) {
    out += 'A';
  } else {
    for (const ClassLetter& c : kTypeLetters) {
      if (mask & c.bit) out += c.letter;
    }
  }
  if (mask & kEventKeyspace) out += 'K';
  if (mask & kEventKeyevent) out += 'E';
  if (mask & kEventKeyMiss) out += 'm';
  return out;
}

void KeyspaceEvents::PropagateDelete(uint32_t db, std::string_view key) const {
  if (server_ != nullptr && server_->replication().active()) [[unlikely]] {
    server_->aof().PropagateDelete(static_cast<int>(db), key);
  }
}

void KeyspaceEvents::Publish(uint32_t mask, std::string_view event, std::string_view key, uint32_t db) const {
  std::string prefix = "@" + std::to_string(db) + "__:";
  if (mask & kEventKeyspace) pubsub_.Publish("__keyspace" + prefix + std::string(key), event, false);
  if (mask & kEventKeyevent) pubsub_.Publish("__keyevent" + prefix + std::string(event), key, false);
}

void KeyspaceEvents::PublishItem(std::string_view event, std::string_view container, std::string_view id,
                                 uint32_t db) const {
  std::string message;
  message.reserve(container.size() + 1 + id.size());
  message.append(container).append("/").append(id);
  pubsub_.Publish("__itemevent@" + std::to_string(db) + "__:" + std::string(event), message, false);
}

void NotifyKeyspace(const ShardCommand& c, uint32_t event_class, std::string_view event, std::string_view key) {
  c.server.keyspace_events().Notify(event_class, event, key, c.db.index());
}

void NotifyKeyspace(const ConnCommand& c, uint32_t event_class, std::string_view event, std::string_view key) {
  c.server.keyspace_events().Notify(event_class, event, key, static_cast<uint32_t>(c.session.db));
}

}  // namespace lapse::server
