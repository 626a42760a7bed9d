// File: server/keyspace_events.h
//
// Keyspace notifications, as Redis 7.0 sends them: a command that changes a key reports an
// event ("set", "lpush", "expire", ...) of a class (generic, string, list, ...); when
// `notify-keyspace-events` enables the class, the event is published on
// `__keyspace@<db>__:<key>` (message: the event) and/or `__keyevent@<db>__:<event>`
// (message: the key), through the ordinary Pub/Sub registry.
//
// Commands call Notify after their change. With notifications off (the default) that is one
// relaxed atomic load. Expiry reaches this class from the engine (engine/key_events.h), so
// `expired` is sent when a key is actually deleted, by a read or by the reclaimer.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/key_events.h"
#include "server/script_undo.h"
#include "server/tracking.h"

namespace lapse::server {

class PubSub;
class Server;

// Redis's NOTIFY_* bits, so that a mask reads the same as in Redis.
enum EventClass : uint32_t {
  kEventKeyspace = 1 << 0,  // K
  kEventKeyevent = 1 << 1,  // E
  kEventGeneric = 1 << 2,   // g
  kEventString = 1 << 3,    // $
  kEventList = 1 << 4,      // l
  kEventSet = 1 << 5,       // s
  kEventHash = 1 << 6,      // h
  kEventZset = 1 << 7,      // z
  kEventExpired = 1 << 8,   // x
  kEventEvicted = 1 << 9,   // e
  kEventStream = 1 << 10,   // t
  kEventKeyMiss = 1 << 11,  // m (not part of A)
  kEventModule = 1 << 13,   // d
  kEventNew = 1 << 14,      // n (not part of A)
  kEventAll = kEventGeneric | kEventString | kEventList | kEventSet | kEventHash | kEventZset | kEventExpired |
              kEventEvicted | kEventStream | kEventModule,
};

// Or'd into an event's class for the changes Redis 7.0 publishes without signalModifiedKey,
// which therefore leave client-side caches alone: XSETID and a stream's consumer groups and
// consumers (XGROUP, and the consumers XREADGROUP, XCLAIM and XAUTOCLAIM create). No mask
// holds this bit, so it never decides whether an event is published.
inline constexpr uint32_t kEventKeepsCaches = 1u << 31;

// `notify-keyspace-events` text to a mask, nullopt for a character Redis does not know.
std::optional<uint32_t> ParseEventClasses(std::string_view classes);
// The mask as CONFIG GET shows it ("AKE", "xK", ...).
std::string FormatEventClasses(uint32_t mask);

class KeyspaceEvents : public engine::KeyEventListener {
 public:
  // Every change reported here also invalidates the key for client-side caching (`tracking`,
  // server/tracking.h), whether or not its class is enabled, unless it is marked
  // kEventKeepsCaches.
  KeyspaceEvents(PubSub& pubsub, Tracking* tracking) : pubsub_(pubsub), tracking_(tracking) {}

  void Configure(uint32_t mask) { mask_.store(mask, std::memory_order_relaxed); }
  // Keys deleted by expiry or eviction are propagated to replicas as DEL, as Redis does.
  void SetServer(Server* server) { server_ = server; }
  // Publishes `event` on `key` of database `db` if its class is enabled.
  // Inside a script step that may still start over (server/script_undo.h) the event is held
  // back until the script's run counts.
  void Notify(uint32_t event_class, std::string_view event, std::string_view key, uint32_t db) const {
    Emit(event_class, event, key, db, false);
  }
  // Emits what Notify held back.
  void Release(const ScriptUndo::HeldEvent& e) const { Send(e.event_class, e.event, e.key, e.db); }

  // Expiry and eviction happen whatever becomes of a script during which they happen.
  void KeyExpired(uint32_t db, std::string_view key) override {
    PropagateDelete(db, key);
    Emit(kEventExpired, "expired", key, db, true);
  }
  // Redis 7.4's event for fields deleted by their own deadlines.
  void FieldsExpired(uint32_t db, std::string_view key) override { Emit(kEventHash, "hexpired", key, db, true); }
  void KeyEvicted(uint32_t db, std::string_view key) override {
    PropagateDelete(db, key);
    Emit(kEventEvicted, "evicted", key, db, true);
  }
  void KeyCreated(uint32_t db, std::string_view key) override { Notify(kEventNew, "new", key, db); }
  void KeyMissed(uint32_t db, std::string_view key) override { Notify(kEventKeyMiss, "keymiss", key, db); }

  // Items (IPUT, IDEL, expiry) are not keys, so lapse gives them a channel of their own,
  // `__itemevent@<db>__:<event>` with `container/id` as the message, sent when the keyevent
  // channels (E) and the event's class are on: iput and idel are generic (g), expired is x,
  // evicted is e.
  // `db` is the database the container belongs to.
  void NotifyItem(uint32_t event_class, std::string_view event, std::string_view container, std::string_view id,
                  uint32_t db) const {
    uint32_t mask = mask_.load(std::memory_order_relaxed);
    if ((mask & event_class) != 0 && (mask & kEventKeyevent) != 0) [[unlikely]] PublishItem(event, container, id, db);
  }
  void ItemExpired(uint32_t db, std::string_view container, std::string_view id) override {
    NotifyItem(kEventExpired, "expired", container, id, db);
  }
  // Tracking has nothing to invalidate: items are not keys a client can track.
  void ItemEvicted(uint32_t db, std::string_view container, std::string_view id) override {
    NotifyItem(kEventEvicted, "evicted", container, id, db);
  }

 private:
  void PropagateDelete(uint32_t db, std::string_view key) const;
  void Emit(uint32_t event_class, std::string_view event, std::string_view key, uint32_t db, bool happened) const {
    if (ScriptUndo* undo = ActiveScriptUndo()) [[unlikely]] {
      if (Heard(event_class)) undo->HoldEvent(event_class, event, key, db, happened);
      return;
    }
    Send(event_class, event, key, db);
  }
  void Send(uint32_t event_class, std::string_view event, std::string_view key, uint32_t db) const {
    bool keeps_caches = (event_class & kEventKeepsCaches) != 0;
    event_class &= ~kEventKeepsCaches;
    // A miss changes nothing, and a new key is reported by the write that made it.
    if (event_class != kEventKeyMiss && event_class != kEventNew && !keeps_caches) {
      // Expiry and eviction are no client's doing (NOLOOP still hears of them).
      tracking_->KeyModified(key, event_class == kEventExpired || event_class == kEventEvicted);
    }
    uint32_t mask = mask_.load(std::memory_order_relaxed);
    if ((mask & event_class) != 0 && (mask & (kEventKeyspace | kEventKeyevent)) != 0) [[unlikely]] {
      Publish(mask, event, key, db);
    }
  }
  // Whether Send would do anything with the event: what nobody would hear is not held.
  bool Heard(uint32_t event_class) const {
    uint32_t mask = mask_.load(std::memory_order_relaxed);
    return ((mask & event_class) != 0 && (mask & (kEventKeyspace | kEventKeyevent)) != 0) ||
           tracking_->keys() + tracking_->prefixes() > 0;
  }
  void Publish(uint32_t mask, std::string_view event, std::string_view key, uint32_t db) const;
  void PublishItem(std::string_view event, std::string_view container, std::string_view id, uint32_t db) const;

  PubSub& pubsub_;
  Tracking* tracking_;
  Server* server_ = nullptr;
  std::atomic<uint32_t> mask_{0};
};

}  // namespace lapse::server
