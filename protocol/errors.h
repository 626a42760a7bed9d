// File: protocol/errors.h
//
// Every error string lapse puts on the wire, in one place, worded as Redis 7 words them so
// that clients which match on error text keep working. Messages carry their prefix ("ERR",
// "WRONGTYPE", "NOAUTH", ...) but not the leading '-' or the trailing CRLF: ReplyWriter::Error
// adds those. Messages that embed a value are built by the functions at the end.
#pragma once

#include <string>
#include <string_view>

#include "protocol/arg_reader.h"

namespace lapse::protocol::errors {

// Protocol violations; the connection is closed after sending one.
inline constexpr std::string_view kInvalidMultibulkLength = "Protocol error: invalid multibulk length";
inline constexpr std::string_view kInvalidBulkLength = "Protocol error: invalid bulk length";
inline constexpr std::string_view kTooBigInline = "Protocol error: too big inline request";
// Before AUTH, a client may send no more than 10 arguments of at most 16 KiB (Redis 7.0).
inline constexpr std::string_view kUnauthenticatedMultibulkLength = "Protocol error: unauthenticated multibulk length";
inline constexpr std::string_view kUnauthenticatedBulkLength = "Protocol error: unauthenticated bulk length";
inline constexpr std::string_view kTooBigMbulkCount = "Protocol error: too big mbulk count string";
inline constexpr std::string_view kTooBigBulkCount = "Protocol error: too big bulk count string";
inline constexpr std::string_view kUnbalancedQuotes = "Protocol error: unbalanced quotes in request";

// Generic argument errors.
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
// HyperLogLog: a string that is not one, and one whose sparse code is corrupt.
inline constexpr std::string_view kNotHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr std::string_view kCorruptHll = "INVALIDOBJ Corrupted HLL object detected";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNanOrInfinity = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kOffsetOutOfRange = "ERR offset is out of range";
inline constexpr std::string_view kNotPositive = "ERR value is out of range, must be positive";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
// An integer argument Redis reads as a C int (getIntFromObjectOrReply) that fits 64 bits only.
inline constexpr std::string_view kIntOutOfRange =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
inline constexpr std::string_view kSameDb = "ERR source and destination objects are the same";
inline constexpr std::string_view kInvalidDbIndex = "ERR invalid first DB index";
inline constexpr std::string_view kInvalidSecondDbIndex = "ERR invalid second DB index";
inline constexpr std::string_view kNxXxGtLt = "ERR NX and XX, GT or LT options at the same time are not compatible";
inline constexpr std::string_view kGtLtNx = "ERR GT and LT options at the same time are not compatible";

// Bitmaps and LCS.
inline constexpr std::string_view kBitOffset = "ERR bit offset is not an integer or out of range";
inline constexpr std::string_view kBitValue = "ERR bit is not an integer or out of range";
inline constexpr std::string_view kBitArgument = "ERR The bit argument must be 1 or 0.";
inline constexpr std::string_view kBitfieldType =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
inline constexpr std::string_view kBitfieldOverflow = "ERR Invalid OVERFLOW type specified";
inline constexpr std::string_view kBitfieldReadOnly = "ERR BITFIELD_RO only supports the GET subcommand";
inline constexpr std::string_view kBitopNot = "ERR BITOP NOT must be called with a single source key.";
inline constexpr std::string_view kLcsNotStrings = "ERR The specified keys must contain string values";
inline constexpr std::string_view kLcsIdxAndLen = "ERR If you want both the length and indexes, please just use IDX.";
inline constexpr std::string_view kLcsTooLong = "ERR String too long for LCS";
inline constexpr std::string_view kLcsTableTooBig =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
inline constexpr std::string_view kLcsNoMemory = "ERR Insufficient memory, failed allocating transient memory for LCS";

inline constexpr std::string_view kSlowlogCount = "ERR count should be greater than or equal to -1";
inline constexpr std::string_view kClusterDisabled = "ERR This instance has cluster support disabled";
inline constexpr std::string_view kTimeoutNotInteger = "ERR timeout is not an integer or out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";

// Scripting.
inline constexpr std::string_view kTooManyKeys = "ERR Number of keys can't be greater than number of args";
inline constexpr std::string_view kNegativeKeys = "ERR Number of keys can't be negative";
inline constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr std::string_view kNotBusy = "NOTBUSY No scripts in execution right now.";
inline constexpr std::string_view kBusyScript =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kUnkillable =
    "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the "
    "script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
inline constexpr std::string_view kScriptFlushOption = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";

// Transactions.
inline constexpr std::string_view kMultiNested = "ERR MULTI calls can not be nested";
inline constexpr std::string_view kExecWithoutMulti = "ERR EXEC without MULTI";
inline constexpr std::string_view kDiscardWithoutMulti = "ERR DISCARD without MULTI";
inline constexpr std::string_view kWatchInsideMulti = "ERR WATCH inside MULTI is not allowed";
inline constexpr std::string_view kExecAbort = "EXECABORT Transaction discarded because of previous errors.";
// A refused EXEC ends its transaction; Redis 7.0 then names the refusal, without its ERR.
inline std::string ExecAbortBecause(std::string_view refusal) {
  if (refusal.starts_with("ERR ")) refusal.remove_prefix(4);
  return "EXECABORT Transaction discarded because of: " + std::string(refusal);
}

// Connection and server.
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kHelloNoAuth =
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
inline constexpr std::string_view kWrongPass = "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr std::string_view kAuthNoPassword =
    "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
inline constexpr std::string_view kUnsupportedProtocol = "NOPROTO unsupported protocol version";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
// Sent (then the connection is closed) to a non-loopback client while protected-mode is on
// and no password is set. Redis 7.0's text, its typo included.
inline constexpr std::string_view kProtectedMode =
    "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the "
    "default user. In this mode connections are only accepted from the loopback interface. If you want to connect "
    "from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode "
    "sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the "
    "same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do "
    "so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode "
    "by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting "
    "the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above "
    "things in order for the server to start accepting connections from the outside.";
inline constexpr std::string_view kDebugDisabled =
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";
inline constexpr std::string_view kNoConfigFile = "ERR The server is running without a config file";
// COMMAND GETKEYS.
inline constexpr std::string_view kInvalidCommandSpecified = "ERR Invalid command specified";
inline constexpr std::string_view kCommandHasNoKeys = "ERR The command has no key arguments";
inline constexpr std::string_view kInvalidCommandArity = "ERR Invalid number of arguments specified for command";
inline constexpr std::string_view kInvalidCommandArguments = "ERR Invalid arguments specified for command";
inline constexpr std::string_view kInvalidClientId = "ERR Invalid client ID";
inline constexpr std::string_view kClientIdNotPositive = "ERR client-id should be greater than 0";
inline constexpr std::string_view kClientNameSpaces = "ERR Client names cannot contain spaces, newlines or special characters.";

// Containers and items.
inline constexpr std::string_view kItemNotObject = "ERR the item must be a JSON object";
inline constexpr std::string_view kItemIdMismatch = "ERR the item's \"id\" property must be a string equal to the id argument";
inline constexpr std::string_view kItemTooLarge = "ERR the item is larger than the maximum of 2097152 bytes";
inline constexpr std::string_view kInvalidItemId =
    "ERR invalid item id: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'";
inline constexpr std::string_view kInvalidContainerName =
    "ERR invalid container name: it must be 1 to 255 bytes of UTF-8 without '/', '\\', '?' or '#'";
// CSETRU under --billing serverless, in the spirit of Cosmos DB's refusal to set throughput on
// a container of a serverless account.
inline constexpr std::string_view kThroughputOnServerless =
    "ERR setting a container's request units per second is not supported with serverless billing, "
    "which has no provisioned throughput: use CONFIG SET billing provisioned first";

// The change feed (ICHANGES). Tokens are quoted as the client gave them or as ICHANGES wrote them.
inline constexpr std::string_view kUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

inline std::string NoSuchContainer(std::string_view container) {
  return "ERR no such container '" + std::string(container) + "'";
}

inline std::string InvalidFeedToken(std::string_view token) {
  return "ERR invalid change feed token '" + std::string(token) +
         "': give BEGINNING, NOW or a token that ICHANGES returned";
}

inline std::string FeedTokenTooOld(std::string_view token, std::string_view container, std::string_view oldest) {
  return "ERR change feed token '" + std::string(token) + "' of container '" + std::string(container) +
         "' is older than its retention (change-feed-retention): the oldest token still available is '" +
         std::string(oldest) + "'";
}

inline std::string FeedTokenOfDroppedContainer(std::string_view token, std::string_view container,
                                               std::string_view oldest) {
  return "ERR change feed token '" + std::string(token) + "' belongs to an earlier container '" +
         std::string(container) + "' that was dropped: the oldest token still available is '" + std::string(oldest) +
         "'";
}

inline std::string FeedTokenAhead(std::string_view token, std::string_view container, std::string_view newest) {
  return "ERR change feed token '" + std::string(token) + "' is ahead of container '" + std::string(container) +
         "', whose newest token is '" + std::string(newest) + "'";
}

inline std::string ContainerDroppedWhileWaiting(std::string_view container) {
  return "ERR container '" + std::string(container) + "' was dropped while waiting for its changes";
}

inline std::string InvalidTtl(std::string_view value) {
  std::string msg = "ERR The input ttl '";
  msg.append(value);
  msg.append("' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which means never expire.");
  return msg;
}

inline std::string DuplicateProperty(std::string_view name) {
  std::string msg = "ERR the item has the property '";
  msg.append(name);
  msg.append("' more than once");
  return msg;
}

inline std::string InvalidJson(std::string_view detail) {
  std::string msg = "ERR the item is not valid JSON: ";
  msg.append(detail);
  return msg;
}

// As Redis 7.0 builds it: the name cut to 128 bytes, then quoted arguments appended while
// the list is shorter than 128 bytes, the last one cut to what is left of those 128; each
// also ends at a NUL byte, as C strings do.
inline std::string UnknownCommand(std::string_view name, const std::string_view* args, size_t nargs) {
  std::string list;
  for (size_t i = 0; i < nargs && list.size() < 128; ++i) {
    list.push_back('\'');
    list.append(AsCString(args[i]).substr(0, 128 - list.size() + 1));
    list.append("' ");
  }
  std::string msg = "ERR unknown command '";
  msg.append(AsCString(name).substr(0, 128));
  msg.append("', with args beginning with: ");
  msg.append(list);
  return msg;
}

inline constexpr std::string_view kNoShutdownInProgress = "ERR No shutdown in progress.";

// The "'<sub>'. Try <COMMAND> HELP." tail of the unknown-subcommand errors.
inline std::string QuoteAndTryHelp(std::string msg, std::string_view sub, std::string_view command) {
  msg.append(sub);
  msg.append("'. Try ");
  for (char c : command) msg.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c));
  msg.append(" HELP.");
  return msg;
}

// Redis quotes at most 128 bytes of the subcommand, up to a NUL.
inline std::string UnknownSubcommand(std::string_view sub, std::string_view command) {
  return QuoteAndTryHelp("ERR unknown subcommand '", AsCString(sub).substr(0, 128), command);
}

// Redis's reply to a subcommand it does not know with that many arguments (DEBUG).
inline std::string UnknownSubcommandOrArity(std::string_view sub, std::string_view command) {
  return QuoteAndTryHelp("ERR unknown subcommand or wrong number of arguments for '", sub, command);
}

inline std::string UnknownClientType(std::string_view type) {
  std::string msg = "ERR Unknown client type '";
  msg.append(type);
  msg.push_back('\'');
  return msg;
}

// A RESP2 client with subscriptions sent anything but a Pub/Sub command, PING, QUIT or RESET.
inline std::string NotInSubscribedMode(std::string_view command) {
  std::string msg = "ERR Can't execute '";
  msg.append(command);
  msg.append("': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context");
  return msg;
}

inline std::string WrongArity(std::string_view command) {
  std::string msg = "ERR wrong number of arguments for '";
  msg.append(command);
  msg.append("' command");
  return msg;
}

inline std::string InvalidExpireTime(std::string_view command) {
  std::string msg = "ERR invalid expire time in '";
  msg.append(command);
  msg.append("' command");
  return msg;
}

}  // namespace lapse::protocol::errors
