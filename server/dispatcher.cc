#include "server/dispatcher.h"

#include "engine/item_json.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;

Dispatcher::Dispatcher(Server& server, ClientSession& session)
    : server_(server), session_(session) {
  size_t n = server.shards().size();
  shard_queue_.resize(n);
  shard_out_.resize(n);
  shard_ends_.resize(n);
}

void Dispatcher::ChargeRefusal() {
  session_.last_charge = server_.SettleCharge(RequestCharge{}, true, server_.clock().NowMs());
}

const CommandSpec* Dispatcher::Admit(const std::vector<std::string_view>& args, protocol::ReplyWriter& reply) {
  const CommandSpec* spec = server_.commands().Find(args[0]);
  if (spec == nullptr) {
    RecordLastCommand(nullptr);
    reply.Error(errors::UnknownCommand(args[0], args.data() + 1, args.size() - 1));
    return nullptr;
  }
  // A container's subcommand is a command of its own to Redis: its own arity, its own name.
  const std::string* name = &spec->name;
  int arity = spec->arity;
  if (!spec->subcommands.empty() && args.size() > 1) {
    const SubcommandSpec* sub = spec->FindSubcommand(args[1]);
    if (sub == nullptr) {
      RecordLastCommand(nullptr);
      reply.Error(errors::UnknownSubcommand(args[1], spec->name));
      return nullptr;
    }
    name = &sub->name;
    arity = sub->arity;
  }
  // Like Redis, a command counts as the client's last even when refused below.
  RecordLastCommand(name);
  // Redis checks arity before authentication, so a malformed command says so even then.
  if (!ArityOk(arity, args.size())) {
    reply.Error(errors::WrongArity(*name));
    return nullptr;
  }
  // Redis refuses a protected command before it asks for authentication.
  if ((spec->flags & kProtected) && !DebugAllowed()) {
    reply.Error(errors::kDebugDisabled);
    return nullptr;
  }
  if (!session_.authenticated && !(spec->flags & kNoAuth)) {
    reply.Error(errors::kNoAuth);
    return nullptr;
  }
  if ((spec->flags & kDenyOom) && server_.OverMaxmemory()) {
    reply.Error(errors::kOom);
    return nullptr;
  }
  if ((spec->flags & kContainerArg) && args.size() > 1 && !engine::ValidContainerName(args[1])) {
    reply.Error(errors::kInvalidContainerName);
    return nullptr;
  }
  return spec;
}

bool Dispatcher::DebugAllowed() const {
  switch (server_.settings().enable_debug_command) {
    case Settings::DebugAccess::kYes:
      return true;
    case Settings::DebugAccess::kLocal:
      return session_.local;
    case Settings::DebugAccess::kNo:
      break;
  }
  return false;
}

uint32_t Dispatcher::ShardOf(const CommandSpec& spec, const std::vector<std::string_view>& args) const {
  // A keyed command called without its key (OBJECT HELP) runs on the caller's own shard.
  if ((spec.flags & kItemKey) && args.size() > 2) return server_.shards().ShardForItem(args[1], args[2]);
  size_t pos = static_cast<size_t>(spec.first_key);
  return pos < args.size() ? server_.shards().ShardFor(args[pos]) : static_cast<uint32_t>(session_.home);
}

void Dispatcher::RunShardCommand(Queued& q, engine::Shard& shard, std::string* out) {
  protocol::ReplyWriter writer(out, q.resp);
  size_t before = out->size();
  ShardCommand cmd{shard, shard.db(q.db), std::span(*q.args), writer, server_.clock().NowMs(), server_};
  std::get<ShardHandler>(q.spec->handler)(cmd);
  bool rejected = out->size() > before && (*out)[before] == '-';
  q.charge = server_.SettleCharge(cmd.charge, rejected, cmd.now_ms);
}

awaitable<void> Dispatcher::RunConnCommand(const CommandSpec& spec, const std::vector<std::string_view>& args,
                                           std::string* out) {
  protocol::ReplyWriter reply(out, session_.resp);
  size_t before = out->size();
  ConnCommand cmd{session_, server_, std::span(args), reply};
  if (std::holds_alternative<ConnHandler>(spec.handler)) {
    std::get<ConnHandler>(spec.handler)(cmd);
  } else {
    co_await std::get<FanoutHandler>(spec.handler)(cmd);
  }
  bool rejected = out->size() > before && (*out)[before] == '-';
  RecordCharge(spec, server_.SettleCharge(cmd.charge, rejected, server_.clock().NowMs()));
}

awaitable<size_t> Dispatcher::Execute(std::span<const std::vector<std::string_view>> batch, std::string* out,
                                      size_t flush_at) {
  ShardSet& shards = server_.shards();
  ThreadCounters& counters = server_.counters(session_.home);
  size_t ran = 0;
  for (const auto& args : batch) {
    if (session_.close_after_reply || out->size() >= flush_at) break;
    if (queue_.size() >= kMaxQueued) co_await Flush(out);
    ++ran;
    protocol::ReplyWriter reply(out, session_.resp);
    counters.Bump(counters.commands);
    if (!queue_.empty()) {
      // Errors must still come out in order: admit into a scratch buffer and queue it if
      // something is pending. Rare, so the copy does not matter.
      std::string scratch;
      protocol::ReplyWriter scratch_reply(&scratch, session_.resp);
      const CommandSpec* spec = Admit(args, scratch_reply);
      if (spec == nullptr || !std::holds_alternative<ShardHandler>(spec->handler)) {
        co_await Flush(out);
        out->append(scratch);
        if (spec == nullptr) {
          ChargeRefusal();
          continue;
        }
      } else {
        queue_.push_back({spec, &args, ShardOf(*spec, args), session_.db, session_.resp});
        continue;
      }
      co_await RunConnCommand(*spec, args, out);
      continue;
    }
    const CommandSpec* spec = Admit(args, reply);
    if (spec == nullptr) {
      ChargeRefusal();
      continue;
    }
    if (std::holds_alternative<ShardHandler>(spec->handler)) {
      uint32_t shard = ShardOf(*spec, args);
      Queued q{spec, &args, shard, session_.db, session_.resp};
      if (shard == session_.home) {
        RunShardCommand(q, shards.shard(shard), out);
        RecordCharge(*spec, q.charge);
      } else {
        queue_.push_back(q);
      }
    } else {
      co_await RunConnCommand(*spec, args, out);
    }
  }
  co_await Flush(out);
  co_return ran;
}

awaitable<void> Dispatcher::Flush(std::string* out) {
  if (queue_.empty()) co_return;
  involved_.clear();
  for (size_t i = 0; i < queue_.size(); ++i) {
    uint32_t s = queue_[i].shard;
    if (shard_queue_[s].empty()) involved_.push_back(s);
    shard_queue_[s].push_back(i);
  }
  co_await server_.shards().RunOn(
      session_.home, involved_,
      [this](engine::Shard& shard) {
        uint32_t s = shard.id();
        std::string& buf = shard_out_[s];
        for (size_t i : shard_queue_[s]) {
          RunShardCommand(queue_[i], shard, &buf);
          shard_ends_[s].push_back(buf.size());
        }
      },
      session_.waker);
  // Merge back into batch order: each shard's replies are consumed front to back.
  std::vector<size_t> cursor(shard_out_.size(), 0);
  std::vector<size_t> taken(shard_out_.size(), 0);
  for (const Queued& q : queue_) {
    RecordCharge(*q.spec, q.charge);
    uint32_t s = q.shard;
    size_t end = shard_ends_[s][taken[s]++];
    out->append(shard_out_[s], cursor[s], end - cursor[s]);
    cursor[s] = end;
  }
  for (uint32_t s : involved_) {
    shard_queue_[s].clear();
    shard_out_[s].clear();
    shard_ends_[s].clear();
  }
  queue_.clear();
}

}  // namespace lapse::server
