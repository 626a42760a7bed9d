// File: server/tracking.h
//
// Client-side caching (CLIENT TRACKING), as Redis 7.0 has it.
//
// A tracking client is told when a key it may have cached changes. Two modes:
//  - default: the keys a client reads with a read-only command are recorded (TrackedKeys);
//    the next change to one of them sends the client `invalidate [key]` once and forgets it.
//    OPTIN records only after CLIENT CACHING YES, OPTOUT records unless CLIENT CACHING NO;
//    either answer applies to the next command only (or to the next MULTI ... EXEC).
//  - BCAST: nothing is recorded; every change to a key starting with one of the client's
//    prefixes is sent. Changes are batched: the dispatcher flushes them after each batch of
//    commands it runs (Redis flushes once per event-loop turn), one message per prefix with
//    its keys in byte order, as Redis sends them.
// FLUSHDB and FLUSHALL send every tracking client `invalidate` with a null instead of keys
// and drop the whole table. NOLOOP leaves out the changes the client made itself.
//
// Where messages go: a RESP3 client gets a push (`>2 invalidate [...]`). With REDIRECT id,
// the other client gets it instead: a push if it speaks RESP3, else a Pub/Sub `message` on
// `__redis__:invalidate` if it is subscribed to anything (a RESP2 subscriber); otherwise it
// is dropped. If the redirect target is gone, a RESP3 tracker hears `tracking-redir-broken`
// instead, and CLIENT LIST shows flag R. Messages travel through the receiver's PushOutbox
// (server/pubsub.h), so any thread may send them.
//
// Changes reach this class from KeyspaceEvents (every write command reports its changes
// there, and the engine reports expiry there), so a key is invalidated whenever a keyspace
// event, enabled or not, names it. Reads are recorded by the dispatcher: before a read-only
// command runs, so that a write on another thread between the read and the record cannot be
// missed, and again after it, since a read that deletes an expired key invalidates it.
//
// The client whose own command changes a key it tracks hears of it after that command's
// reply, as in Redis 7.0: while a command runs, the dispatcher makes its CommandContext the
// thread's current one, and invalidations for that client wait in it. Invalidations from
// other threads never overtake the reply of a command the client is running either
// (PushOutbox keeps them after it): that reply may hold the value they invalidate.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/config.h"
#include "server/tracking_table.h"

namespace lapse::server {

struct ClientInfo;
class ClientRegistry;

// ClientInfo::tracking bits (Redis's CLIENT_TRACKING_* flags).
enum TrackingFlag : uint32_t {
  kTrackingOn = 1 << 0,
  kTrackingBcast = 1 << 1,
  kTrackingOptin = 1 << 2,
  kTrackingOptout = 1 << 3,
  kTrackingNoloop = 1 << 4,
  kTrackingBrokenRedirect = 1 << 5,
  kTrackingCaching = 1 << 6,  // CLIENT CACHING YES (optin) or NO (optout) for the next command
};

class Tracking {
 public:
  using LimitSource = std::function<OutputBufferLimit(bool subscriber)>;
  using NowSource = std::function<int64_t()>;
  Tracking(ClientRegistry& clients, LimitSource limit, NowSource now)
      : clients_(clients), limit_(std::move(limit)), now_(std::move(now)) {}

  // The command a client is running on this thread, and the invalidations for that client
  // that wait for its reply (a nullopt entry stands for a flush).
  struct CommandContext {
    ClientInfo* client = nullptr;
    std::vector<std::optional<std::string>> pending;
    // Keys recorded only because the running read-only command is about to read them. In
    // Redis they would not be tracked yet, so the command's own change to one (deleting it
    // as expired) tells the client nothing.
    std::vector<std::string> provisional;
    bool IsProvisional(std::string_view key) const;
    // While a script's command runs: Redis 7.0 credits its changes to the script's own client,
    // so BCAST's NOLOOP does not leave them out (the default mode's NOLOOP still does).
    bool in_script = false;
  };
  // The thread's current context, nullptr outside a command (the reclaimer).
  static CommandContext*& Current();

  // ---- CLIENT TRACKING ----
  // Turns tracking on with `options` (kTrackingBcast|Optin|Optout|Noloop) and `prefixes`
  // (BCAST only; none means every key). The caller has checked them (CheckOptions).
  void Enable(ClientInfo& client, uint64_t redirect, uint32_t options, const std::vector<std::string>& prefixes);
  void Disable(ClientInfo& client);
  // Redis's refusal of `options` and `prefixes` for this client, in its words; nullopt when
  // they may be applied.
  std::optional<std::string> CheckOptions(const ClientInfo& client, uint32_t options,
                                          const std::vector<std::string>& prefixes) const;
  std::vector<std::string> Prefixes(const ClientInfo& client) const { return prefixes_.PrefixesOf(ClientId(client)); }

  // ---- reads and writes ----
  // Records that `client` read `key`; false if it was already recorded.
  bool Remember(const ClientInfo& client, std::string_view key) { return keys_.Remember(key, ClientId(client)); }
  // A key changed (`by_expiry`: deleted as expired or evicted, which no client did): tells whoever
  // tracks it. One relaxed load when nothing is tracked.
  void KeyModified(std::string_view key, bool by_expiry = false) {
    if (keys_.keys() + prefixes_.size() > 0) [[unlikely]] InvalidateKey(key, by_expiry);
  }
  // FLUSHDB / FLUSHALL.
  void Flushed();
  // Sends the BCAST changes this thread collected.
  void FlushBroadcasts();
  // Sends `context`'s waiting invalidations to its client (after its command's reply).
  void DeliverPending(CommandContext& context);
  // Evicts keys over tracking-table-max-keys, telling their readers, with an effort that grows
  // while the table stays over (Redis's trackingLimitUsedSlots). `current` is a client NOLOOP
  // spares (Redis runs this between commands, where there is none).
  void EnforceMaxKeys(const ClientInfo* current);
  void set_max_keys(int64_t max) { max_keys_.store(max, std::memory_order_relaxed); }

  // INFO.
  size_t clients() const { return tracking_clients_.load(std::memory_order_relaxed); }
  size_t keys() const { return keys_.keys(); }
  size_t items() const { return keys_.items(); }
  size_t prefixes() const { return prefixes_.size(); }

 private:
  static uint64_t ClientId(const ClientInfo& client);
  void InvalidateKey(std::string_view key, bool by_expiry);
  // Tells the readers of `key` (Redis's trackingInvalidateKey); `context` is the running
  // command's, if any, whose client hears after its reply or, with NOLOOP, not at all.
  void InvalidateReaders(std::string_view key, CommandContext* context, const ClientInfo* current);
  void RememberForBroadcast(std::string_view key, uint64_t modifier);
  // Redis's sendTrackingMessage: `payload` is the RESP of the keys array or of a null.
  void Send(ClientInfo& tracker, std::string_view payload);
  void Push(ClientInfo& receiver, std::string_view bytes);

  ClientRegistry& clients_;
  LimitSource limit_;
  NowSource now_;
  TrackedKeys keys_;
  PrefixIndex prefixes_;
  std::atomic<size_t> tracking_clients_{0};
  // The ids of the tracking clients, for Flushed; guarded by mu_.
  mutable std::shared_mutex mu_;
  std::set<uint64_t> tracking_ids_;
  std::atomic<int64_t> max_keys_{1000000};
  std::atomic<uint32_t> over_limit_runs_{0};
};

// Makes `context` the thread's current one for as long as it lives.
class TrackingScope {
 public:
  explicit TrackingScope(Tracking::CommandContext* context) { Tracking::Current() = context; }
  ~TrackingScope() { Tracking::Current() = nullptr; }
  TrackingScope(const TrackingScope&) = delete;
  TrackingScope& operator=(const TrackingScope&) = delete;
};

struct ConnCommand;
// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO (server/tracking_commands.cc): runs the
// subcommand and returns true, or returns false when args[1] is none of them.
bool RunTrackingSubcommand(ConnCommand& c);

}  // namespace lapse::server
