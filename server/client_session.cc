#include "server/client_session.h"

#include "server/tracking.h"

namespace lapse::server {

namespace {
const std::string kNoCommand = "NULL";

// CLIENT LIST's flags, in Redis's order, of those lapse has.
std::string Flags(const ClientInfo& c) {
  std::string flags;
  if (c.replica.load(std::memory_order_relaxed)) flags += 'S';
  if (c.monitoring.load(std::memory_order_relaxed)) flags += 'O';
  if (c.subscribed()) flags += 'P';
  if (c.multi_queued.load() >= 0) flags += 'x';
  if (c.is_blocked.load(std::memory_order_relaxed)) flags += 'b';
  uint32_t tracking = c.tracking.load(std::memory_order_relaxed);
  if (tracking & kTrackingOn) flags += 't';
  if (tracking & kTrackingBrokenRedirect) flags += 'R';
  if (tracking & kTrackingBcast) flags += 'B';
  if (c.watcher.IsDirty()) flags += 'd';
  if (c.unix_socket) flags += 'U';
  if (c.no_evict.load(std::memory_order_relaxed)) flags += 'e';
  return flags.empty() ? "N" : flags;
}

// CLIENT LIST's redir=: where a tracking client's invalidations go, -1 when not tracking.
std::string Redirect(const ClientInfo& c) {
  if (!(c.tracking.load(std::memory_order_relaxed) & kTrackingOn)) return "-1";
  return std::to_string(c.tracking_redirect.load(std::memory_order_relaxed));
}
}  // namespace

std::shared_ptr<ClientInfo> ClientRegistry::Add(std::string addr, std::string laddr, int64_t now_ms, int fd,
                                                bool unix_socket) {
  auto info = std::make_shared<ClientInfo>();
  info->unix_socket = unix_socket;
  info->id = NextId();
  info->fd = fd;
  info->addr = std::move(addr);
  info->laddr = std::move(laddr);
  info->created_ms = now_ms;
  info->last_active_ms = now_ms;
  std::lock_guard lock(mu_);
  clients_.emplace(info->id, info);
  return info;
}

void ClientRegistry::Remove(uint64_t id) {
  std::lock_guard lock(mu_);
  clients_.erase(id);
}

std::string ClientRegistry::Describe(int64_t now_ms, uint64_t only_id, TypeFilter type) const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [id, c] : clients_) {
    if (only_id != 0 && id != only_id) continue;
    if (type != TypeFilter::kAny) {
      ClientInfo::Type want = type == TypeFilter::kNormal   ? ClientInfo::Type::kNormal
                              : type == TypeFilter::kPubSub ? ClientInfo::Type::kPubSub
                                                            : ClientInfo::Type::kReplica;
      if (c->type() != want) continue;
    }
    int64_t age = (now_ms - c->created_ms) / 1000;
    int64_t idle = (now_ms - c->last_active_ms.load()) / 1000;
    const std::string* last = c->last_command.load(std::memory_order_relaxed);
    const std::string& cmd = last ? *last : kNoCommand;
    out += "id=" + std::to_string(id) + " addr=" + c->addr + " laddr=" + c->laddr + " fd=" + std::to_string(c->fd) + " name=" + c->name +
           " age=" + std::to_string(age < 0 ? 0 : age) + " idle=" + std::to_string(idle < 0 ? 0 : idle) +
           " flags=" + Flags(*c) + " db=" + std::to_string(c->db.load()) + " sub=" + std::to_string(c->subscribed_channels.load()) +
           " psub=" + std::to_string(c->subscribed_patterns.load()) +
           " ssub=" + std::to_string(c->subscribed_shard_channels.load()) + " multi=" +
           std::to_string(c->multi_queued.load()) + " qbuf=" +
           std::to_string(c->query_buffer_bytes.load()) + " qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=" +
           std::to_string(c->output_bytes.load()) + " tot-mem=" + std::to_string(c->memory_bytes.load()) + " events=r cmd=" + cmd + " user=" + c->user + " redir=" + Redirect(*c) + " resp=" +
           std::to_string(c->resp.load()) + "\n";
  }
  return out;
}

size_t ClientRegistry::KillMatching(const std::function<bool(const ClientInfo&)>& match, uint64_t spared_id) {
  // The kills run outside the lock: a kill only posts to its client's thread, but nothing
  // of the registry is needed for it.
  std::vector<std::function<void()>> kills;
  size_t matched = 0;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, c] : clients_) {
      if (c->kill_posted || !match(*c)) continue;
      if (id == spared_id) {
        ++matched;
      } else if (c->kill) {
        ++matched;
        c->kill_posted = true;
        kills.push_back(c->kill);
      }
    }
  }
  for (const auto& kill : kills) kill();
  return matched;
}

}  // namespace lapse::server
