#include "server/dispatcher.h"

#include "engine/item_json.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/server.h"

namespace lapse::server {

namespace errors = protocol::errors;

namespace {
// A command is charged differently when it was refused; its reply, written from `before` on,
// then starts with an error.
bool RepliedWithError(const std::string& out, size_t before) { return out.size() > before && out[before] == '-'; }
}  // namespace

Dispatcher::Dispatcher(Server& server, ClientSession& session) : server_(server), session_(session) {}

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
  // A keyed command called without its key (OBJECT HELP) may run on any shard.
  if ((spec.flags & kItemKey) && args.size() > 2) return server_.shards().ShardForItem(args[1], args[2]);
  size_t pos = static_cast<size_t>(spec.first_key);
  return pos < args.size() ? server_.shards().ShardFor(args[pos]) : static_cast<uint32_t>(session_.home);
}

void Dispatcher::RunShardCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out) {
  protocol::ReplyWriter writer(out, session_.resp);
  size_t before = out->size();
  // The charge is settled holding the shard: an item's container is kept alive by the
  // shard's part of it, which background reclamation may free once the shard is let go.
  double charge = server_.shards().WithShard(ShardOf(spec, args), [&](engine::Shard& shard) {
    ShardCommand cmd{shard, shard.db(session_.db), std::span(args), writer, server_.clock().NowMs(), server_};
    std::get<ShardHandler>(spec.handler)(cmd);
    bool rejected = RepliedWithError(*out, before);
    return server_.SettleCharge(cmd.charge, rejected, cmd.now_ms);
  });
  RecordCharge(spec, charge);
}

void Dispatcher::SettleConnCharge(const CommandSpec& spec, const ConnCommand& cmd, bool rejected) {
  RecordCharge(spec, server_.SettleCharge(cmd.charge, rejected, server_.clock().NowMs()));
}

void Dispatcher::RunConnCommand(const CommandSpec& spec, const std::vector<std::string_view>& args, std::string* out) {
  protocol::ReplyWriter reply(out, session_.resp);
  size_t before = out->size();
  ConnCommand cmd{session_, server_, std::span(args), reply};
  std::get<ConnHandler>(spec.handler)(cmd);
  SettleConnCharge(spec, cmd, RepliedWithError(*out, before));
}

awaitable<void> Dispatcher::RunFanoutCommand(const CommandSpec& spec, const std::vector<std::string_view>& args,
                                             std::string* out) {
  protocol::ReplyWriter reply(out, session_.resp);
  size_t before = out->size();
  ConnCommand cmd{session_, server_, std::span(args), reply};
  co_await std::get<FanoutHandler>(spec.handler)(cmd);
  SettleConnCharge(spec, cmd, RepliedWithError(*out, before));
}

awaitable<size_t> Dispatcher::Execute(std::span<const std::vector<std::string_view>> batch, std::string* out,
                                      size_t flush_at) {
  ThreadCounters& counters = server_.counters(session_.home);
  size_t ran = 0;
  for (const auto& args : batch) {
    if (session_.close_after_reply || out->size() >= flush_at) break;
    ++ran;
    counters.Bump(counters.commands);
    protocol::ReplyWriter reply(out, session_.resp);
    const CommandSpec* spec = Admit(args, reply);
    if (spec == nullptr) {
      ChargeRefusal();
    } else if (std::holds_alternative<ShardHandler>(spec->handler)) {
      RunShardCommand(*spec, args, out);
    } else if (std::holds_alternative<ConnHandler>(spec->handler)) {
      RunConnCommand(*spec, args, out);
    } else {
      co_await RunFanoutCommand(*spec, args, out);
    }
  }
  co_return ran;
}

}  // namespace lapse::server
