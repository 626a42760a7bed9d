// File: server/change_feed_commands.cc
//
// ICHANGES container [FROM BEGINNING|NOW|<token>] [COUNT n] [BLOCK ms]: reads a container's
// change feed (engine/change_feed.h), Cosmos DB's "all versions and deletes" mode, and
// answers [next-token, [change, ...]].
//
// Tokens. A token is "<container id>-<lsn>": the position after the last change returned.
// The container id (unique for the life of the process, see ContainerInfo::id) makes a token
// of a dropped container useless for a new container of the same name, whose lsns start again
// at 1, instead of silently skipping that many of its changes.
//
// Blocking. With BLOCK, a read that finds nothing registers the client with the feed in the
// same locked step (so no change slips in between) and sleeps as BLPOP does
// (server/blocking.h): the first change appended, by any thread, claims and wakes it, and it
// reads again from where it stood. A timeout answers the same token and no changes, so that a
// consumer's loop needs no special case; CLIENT UNBLOCK, a kill and CDROP end it as they end
// any other wait. Inside MULTI or a script it does not block.
//
// Cost: like a query, 1 RU per started KiB of change documents returned (at least 1), and 1
// RU per started 100 changes; the container's own budget may throttle it before it reads.
#include <charconv>

#include "engine/change_feed.h"
#include "engine/container.h"
#include "protocol/arg_reader.h"
#include "protocol/errors.h"
#include "protocol/reply_writer.h"
#include "server/blocking.h"
#include "server/client_session.h"
#include "server/command_table.h"
#include "server/container_budget.h"
#include "server/server.h"
#include "server/shard_set.h"

namespace lapse::server {

namespace errors = protocol::errors;
using engine::FeedRead;
using engine::FeedStart;
using protocol::EqualsIgnoreCase;

namespace {

// Changes returned when COUNT is not given (Cosmos DB's default page size is 100 items too).
constexpr int64_t kDefaultCount = 100;

struct Token {
  uint64_t container_id = 0;
  uint64_t lsn = 0;
};

std::string TokenText(uint64_t container_id, uint64_t lsn) {
  return std::to_string(container_id) + "-" + std::to_string(lsn);
}

bool ParseDecimal(std::string_view text, uint64_t* out) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool ParseToken(std::string_view text, Token* token) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) return false;
  return ParseDecimal(text.substr(0, dash), &token->container_id) && token->container_id != 0 &&
         ParseDecimal(text.substr(dash + 1), &token->lsn);
}

struct ChangesRequest {
  FeedStart::Kind from = FeedStart::Kind::kBeginning;
  Token token;              // with from == kAfter
  std::string_view token_text;
  size_t count = kDefaultCount;
  std::optional<int64_t> block_ms;
};

// The options after the container name, each at most once, in any order. Replies the error
// and returns false on bad input.
bool ParseChangesRequest(ConnCommand& c, ChangesRequest* req) {
  bool seen_from = false, seen_count = false;
  for (size_t i = 2; i < c.args.size(); i += 2) {
    std::string_view option = c.args[i];
    if (i + 1 >= c.args.size()) return c.reply.Error(errors::kSyntax), false;
    std::string_view value = c.args[i + 1];
    if (EqualsIgnoreCase(option, "FROM") && !seen_from) {
      seen_from = true;
      if (EqualsIgnoreCase(value, "BEGINNING")) {
        req->from = FeedStart::Kind::kBeginning;
      } else if (EqualsIgnoreCase(value, "NOW")) {
        req->from = FeedStart::Kind::kNow;
      } else if (ParseToken(value, &req->token)) {
        req->from = FeedStart::Kind::kAfter;
        req->token_text = value;
      } else {
        return c.reply.Error(errors::InvalidFeedToken(value)), false;
      }
    } else if (EqualsIgnoreCase(option, "COUNT") && !seen_count) {
      seen_count = true;
      int64_t count = 0;
      if (!protocol::ParseInt64(value, &count)) return c.reply.Error(errors::kNotInteger), false;
      if (count < 1) return c.reply.Error(errors::kNotPositive), false;
      req->count = static_cast<size_t>(count);
    } else if (EqualsIgnoreCase(option, "BLOCK") && !req->block_ms) {
      // As XREAD's BLOCK: milliseconds, 0 waits forever.
      int64_t ms = 0;
      if (!protocol::ParseInt64(value, &ms)) return c.reply.Error(errors::kTimeoutNotInteger), false;
      if (ms < 0) return c.reply.Error(errors::kTimeoutNegative), false;
      req->block_ms = ms;
    } else {
      return c.reply.Error(errors::kSyntax), false;
    }
  }
  return true;
}

// Wakes a client blocked on a feed. Runs on whichever thread appended the change.
class FeedWake final : public engine::ChangeFeedWaiter {
 public:
  explicit FeedWake(std::shared_ptr<BlockedClient> client) : client_(std::move(client)) {}
  void ChangesArrived() override {
    if (client_->Claim()) client_->Finish(BlockedClient::Outcome::kServed);
  }

 private:
  std::shared_ptr<BlockedClient> client_;
};

// Replies to a read from `token` that did not succeed; false when it did.
bool ReplyFeedError(ConnCommand& c, const engine::ContainerInfo& info, std::string_view token, const FeedRead& read,
                    bool waited) {
  switch (read.status) {
    case FeedRead::Status::kOk:
      return false;
    case FeedRead::Status::kTooOld:
      c.reply.Error(errors::FeedTokenTooOld(token, info.name, TokenText(info.id, read.oldest)));
      break;
    case FeedRead::Status::kAhead:
      c.reply.Error(errors::FeedTokenAhead(token, info.name, TokenText(info.id, read.newest)));
      break;
    case FeedRead::Status::kClosed:
      c.reply.Error(waited ? errors::ContainerDroppedWhileWaiting(info.name) : errors::NoSuchContainer(info.name));
      break;
  }
  return true;
}

void ReplyChanges(ConnCommand& c, const engine::ContainerInfo& info, const FeedRead& read) {
  c.charge.Add(engine::RuOp::kQuery, read.bytes, read.docs.size());
  c.reply.ArrayHeader(2);
  c.reply.Bulk(TokenText(info.id, read.position));
  c.reply.ArrayHeader(read.docs.size());
  for (const std::string& doc : read.docs) c.reply.Bulk(doc);
}

awaitable<void> CmdIChanges(ConnCommand& c) {
  ChangesRequest req;
  if (!ParseChangesRequest(c, &req)) co_return;
  std::shared_ptr<engine::ContainerInfo> info = c.server.containers().Find(static_cast<uint32_t>(c.session.db), c.args[1]);
  if (!info) {
    c.reply.Error(errors::NoSuchContainer(c.args[1]));
    co_return;
  }
  if (ThrottledFanout(c, info)) co_return;
  engine::ChangeFeed& feed = info->feed;
  if (req.from == FeedStart::Kind::kAfter && req.token.container_id != info->id) {
    FeedRead now = feed.Read(FeedStart{FeedStart::Kind::kBeginning}, 0);
    c.reply.Error(errors::FeedTokenOfDroppedContainer(req.token_text, info->name, TokenText(info->id, now.oldest)));
    co_return;
  }
  FeedStart start{req.from, req.token.lsn};
  std::shared_ptr<BlockedClient> client;
  std::shared_ptr<FeedWake> wake;
  if (req.block_ms && !ShardSet::InAtomicStep()) {
    client = std::make_shared<BlockedClient>(co_await asio::this_coro::executor);
    client->db = c.session.db;
    client->resp = c.session.resp;
    ArmBlockTimeout(*client, *req.block_ms);
    wake = std::make_shared<FeedWake>(client);
  }
  FeedRead read = feed.Read(start, req.count, wake);
  std::string token_text(req.token_text);
  bool waited = false;
  if (read.status == FeedRead::Status::kOk && read.docs.empty() && wake) {
    co_await SleepWhileBlocked(c, client);
    feed.StopWaiting(wake.get());
    waited = true;
    switch (client->outcome) {
      case BlockedClient::Outcome::kServed:
        // The changes may have gone past the retention meanwhile: then the error names the
        // position this read stood at.
        token_text = TokenText(info->id, read.position);
        read = feed.Read(FeedStart{FeedStart::Kind::kAfter, read.position}, req.count);
        break;
      case BlockedClient::Outcome::kUnblockedError:
        c.reply.Error(errors::kUnblocked);
        co_return;
      case BlockedClient::Outcome::kCancelled:
        c.session.close_after_reply = true;
        co_return;
      default:  // timed out, or CLIENT UNBLOCK without error: nothing new
        break;
    }
  }
  if (ReplyFeedError(c, *info, token_text, read, waited)) co_return;
  ReplyChanges(c, *info, read);
}

}  // namespace

void RegisterChangeFeedCommands(CommandTable& table) {
  table.Add({"ichanges", -2, kReadOnly | kContainerArg | kBlocking, 0, 0, 0, CmdIChanges, "container",
             "Reads a container's change feed: ICHANGES container [FROM BEGINNING|NOW|token] [COUNT n] [BLOCK ms]."});
}

}  // namespace lapse::server
