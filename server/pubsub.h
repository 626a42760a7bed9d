// File: server/pubsub.h
//
// Pub/Sub: who listens to which channel, and how a message reaches a client that lives on
// another event-loop thread.
//
// The registry (PubSub) maps channels, patterns and shard channels to the clients that
// subscribed; one shared_mutex guards it, so PUBLISH only reads it and publishers on several
// threads never wait for one another. A subscriber is its ClientInfo, which outlives the
// registry's reference: a connection unsubscribes from everything before it goes.
//
// Delivery never blocks the publisher. Each client has a PushOutbox: the publisher appends
// the message, already encoded in the subscriber's protocol, under the outbox's own mutex,
// and wakes the subscriber's connection only when no message was waiting there, so a burst
// of messages costs one wake-up. The connection writes its outbox after its replies, or at
// once while it waits for input or in a blocking command (BLPOP). Bytes a
// client has not read count against the pubsub class of client-output-buffer-limit, checked
// as they are appended: a subscriber that does not read is dropped, and later messages to it
// are discarded at once.
//
// A message for the client whose own command publishes it (a RESP3 client PUBLISHing to a
// channel it listens to) goes through its outbox too; the dispatcher puts the messages the
// outbox holds after a command before that command's reply, as Redis orders them.
// Invalidations (server/tracking.h) are kept apart and go after the reply: one that arrived
// while the command ran may be for a write made after the command read the key, and a
// client that saw it first would cache the stale reply.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "server/config.h"

namespace lapse::server {

struct ClientInfo;
struct ClientSession;
class Server;

class PushOutbox {
 public:
  // Appends `bytes` for the client to read. Over the limit the client is killed (`kill`)
  // and this and every later push is dropped. `unsent_elsewhere` is what the connection
  // already holds unwritten (its write in progress). `after_reply`: bytes that must not
  // precede the reply of a command the client is running (invalidations).
  void Append(std::string_view bytes, const OutputBufferLimit& limit, uint64_t unsent_elsewhere, int64_t now_ms,
              const std::function<void()>& kill, bool after_reply = false);
  // Everything appended so far, handed over to the connection: the messages, then what must
  // follow a reply.
  std::string Take();
  // Only the messages, which may go before the reply of the command that just ran.
  std::string TakeMessages();
  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  // How the connection is woken when the outbox stops being empty; set once it serves the
  // client, cleared when it goes. Called under the outbox's lock: it must only post.
  void SetWaker(std::function<void()> wake);

 private:
  mutable std::mutex mu_;
  std::string bytes_;
  std::string after_reply_;
  std::atomic<size_t> size_{0};  // of both
  std::function<void()> wake_;
  int64_t over_soft_since_ms_ = -1;
  bool dropped_ = false;
};

// The three kinds of subscription, with Redis's names for their confirmations.
enum class SubscriptionKind { kChannel, kPattern, kShardChannel };

// What a client has subscribed to; kept by its session, on its thread.
struct Subscriptions {
  std::unordered_set<std::string> channels, patterns, shard_channels;
  // Redis 7.0 keeps a client's patterns in a list: PUNSUBSCRIBE without arguments goes
  // through them in the order they were subscribed.
  std::vector<std::string> pattern_order;
  std::unordered_set<std::string>& Of(SubscriptionKind kind) {
    return kind == SubscriptionKind::kChannel ? channels : kind == SubscriptionKind::kPattern ? patterns : shard_channels;
  }
  size_t total() const { return channels.size() + patterns.size() + shard_channels.size(); }
};

class PubSub {
 public:
  // Reads the live pubsub output limit (client-output-buffer-limit pubsub ...).
  using LimitSource = std::function<OutputBufferLimit()>;
  using NowSource = std::function<int64_t()>;
  PubSub(LimitSource limit, NowSource now) : limit_(std::move(limit)), now_(std::move(now)) {}

  // The client's session knows what it has subscribed to (Subscriptions) and calls these
  // only for a subscription it gains or loses.
  void Subscribe(ClientInfo& client, SubscriptionKind kind, const std::string& name);
  void Unsubscribe(ClientInfo& client, SubscriptionKind kind, const std::string& name);

  // Delivers `message` to the channel's subscribers and, unless sharded, to the clients
  // whose patterns match it; returns how many received it.
  size_t Publish(std::string_view channel, std::string_view message, bool sharded);

  // PUBSUB CHANNELS / SHARDCHANNELS: the channels with a subscriber that match `pattern`
  // (every one when empty).
  std::vector<std::string> Channels(bool sharded, const std::string* pattern) const;
  size_t SubscriberCount(bool sharded, std::string_view channel) const;
  size_t PatternCount() const;
  size_t ChannelCount(bool sharded) const;
  // Whether every subscription of `client` satisfies `allowed(name, is_pattern)` (ACL: a user
  // whose channels were narrowed). Scans every table: for ACL SETUSER only.
  bool AllSubscriptionsAllowed(const ClientInfo& client,
                               const std::function<bool(std::string_view, bool)>& allowed) const;

 private:
  using Subscribers = std::vector<ClientInfo*>;
  using Table = std::unordered_map<std::string, Subscribers>;
  Table& TableOf(SubscriptionKind kind) {
    return kind == SubscriptionKind::kChannel ? channels_ : kind == SubscriptionKind::kPattern ? patterns_ : shard_channels_;
  }

  LimitSource limit_;
  NowSource now_;
  mutable std::shared_mutex mu_;
  Table channels_, patterns_, shard_channels_;
};

// Drops every subscription of the client, without confirmations (RESET, a closing
// connection).
void LeaveAllSubscriptions(Server& server, ClientSession& session);

}  // namespace lapse::server
