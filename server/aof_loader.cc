// File: server/aof_loader.cc
//
// Start-up with appendonly yes: reads the manifest, replays the base and the incremental
// files in order through the dispatcher, as a client would send them (so a replayed command
// is checked and executed exactly as it was the first time, and is not logged again: the log
// opens for appending only once loading is over), then opens the last incremental file.
//
// A file is read whole and cut into commands before any of them runs, so a torn tail is
// found first. Only the last file may end early (a crash mid-append): with
// aof-load-truncated yes the tail (and an unfinished MULTI) is cut off with a warning, with
// no the server refuses to start. Anything else malformed refuses to start with the file and
// the offset, never half-loaded in silence. Redis's `#` annotation lines are skipped.
//
// A base file that begins with "REDIS" is an RDB file (aof-use-rdb-preamble yes, Redis's
// default): the snapshot loader reads it into the data set, and the incremental files replay
// on top of it as usual.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "protocol/arg_reader.h"
#include "server/aof.h"
#include "server/dispatcher.h"
#include "server/persistence.h"
#include "server/server.h"

namespace lapse::server {

namespace {

enum class ParseResult { kCommand, kEnd, kTruncated, kBad };

// Reads "<prefix><number>\r\n" at *pos.
ParseResult ReadNumberLine(const std::string& data, size_t* pos, char prefix, int64_t* n) {
  if (*pos >= data.size()) return ParseResult::kTruncated;
  if (data[*pos] != prefix) return ParseResult::kBad;
  size_t eol = data.find("\r\n", *pos);
  if (eol == std::string::npos) {
    return data.find('\n', *pos) == std::string::npos ? ParseResult::kTruncated : ParseResult::kBad;
  }
  auto [ptr, ec] = std::from_chars(data.data() + *pos + 1, data.data() + eol, *n);
  if (ec != std::errc() || ptr != data.data() + eol || *n < 0) return ParseResult::kBad;
  *pos = eol + 2;
  return ParseResult::kCommand;
}

// One command at *pos, which moves past it only when the command is whole.
ParseResult ParseCommand(const std::string& data, size_t* pos, LoggedCommand* out) {
  while (*pos < data.size() && data[*pos] == '#') {  // annotations (#TS:...)
    size_t eol = data.find('\n', *pos);
    if (eol == std::string::npos) return ParseResult::kTruncated;
    *pos = eol + 1;
  }
  if (*pos >= data.size()) return ParseResult::kEnd;
  size_t at = *pos;
  int64_t count = 0;
  if (ParseResult r = ReadNumberLine(data, &at, '*', &count); r != ParseResult::kCommand) return r;
  if (count < 1) return ParseResult::kBad;
  out->clear();
  for (int64_t i = 0; i < count; ++i) {
    int64_t len = 0;
    if (ParseResult r = ReadNumberLine(data, &at, '$', &len); r != ParseResult::kCommand) return r;
    if (at + static_cast<size_t>(len) + 2 > data.size()) return ParseResult::kTruncated;
    if (data.compare(at + static_cast<size_t>(len), 2, "\r\n") != 0) return ParseResult::kBad;
    out->emplace_back(data, at, static_cast<size_t>(len));
    at += static_cast<size_t>(len) + 2;
  }
  *pos = at;
  return ParseResult::kCommand;
}

// Whether a base file is an RDB file (aof-use-rdb-preamble yes). Redis decides by its
// first bytes, not by its name; so does lapse, so that a renamed file loads the same.
bool StartsAsRdb(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[5] = {};
  return in.read(magic, sizeof magic) && std::memcmp(magic, "REDIS", sizeof magic) == 0;
}

std::optional<std::string> ReadWhole(const std::string& path, std::string* data) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "can't open the append only file " + path + ": " + std::strerror(errno);
  std::stringstream ss;
  ss << in.rdbuf();
  *data = ss.str();
  return std::nullopt;
}

// Parses a manifest as Redis 7.0 writes it: "file <name> seq <n> type <b|h|i>" per line.
std::optional<std::string> ParseManifest(const std::string& text, const std::string& path,
                                         std::vector<AofFileEntry>* files) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    AofFileEntry entry;
    std::string key, value;
    bool has_name = false, has_seq = false, has_type = false;
    while (words >> key >> value) {
      if (key == "file") {
        entry.name = value;
        has_name = true;
      } else if (key == "seq") {
        has_seq = std::from_chars(value.data(), value.data() + value.size(), entry.seq).ec == std::errc();
      } else if (key == "type" && value.size() == 1 && (value[0] == 'b' || value[0] == 'h' || value[0] == 'i')) {
        entry.type = value[0];
        has_type = true;
      }
    }
    if (!has_name || !has_seq || !has_type || entry.name.find('/') != std::string::npos) {
      return "Invalid AOF manifest file format: " + path + " line " + std::to_string(line_no);
    }
    files->push_back(std::move(entry));
  }
  return std::nullopt;
}

}  // namespace

// Runs commands through a dispatcher of its own, as a client without a socket would.
class AofLoader {
 public:
  explicit AofLoader(Server& server) : server_(server) {
    info_ = server.clients().Add("aof", "aof", server.clock().NowMs());
    session_ = std::make_unique<ClientSession>(0, info_, false);
  }
  ~AofLoader() { server_.clients().Remove(info_->id); }

  // Replays one file; `last` lets a torn tail be cut under aof-load-truncated.
  std::optional<std::string> Replay(const std::string& path, const std::string& name, bool last, bool truncate_ok,
                                    uint64_t* loaded) {
    std::string data;
    if (auto err = ReadWhole(path, &data)) return err;
    std::vector<LoggedCommand> batch;
    size_t pos = 0;
    size_t multi_at = std::string::npos;  // where an unfinished MULTI starts
    LoggedCommand command;
    while (true) {
      size_t at = pos;
      ParseResult r = ParseCommand(data, &pos, &command);
      if (r == ParseResult::kEnd) break;
      if (r == ParseResult::kBad) {
        return "Bad file format reading the append only file " + name + " at offset " + std::to_string(at) +
               ": make a backup of your AOF file, then use redis-check-aof --fix <filename.manifest>";
      }
      if (r == ParseResult::kTruncated) {
        size_t keep = multi_at != std::string::npos ? multi_at : at;
        if (!last || !truncate_ok) {
          return "Unexpected end of file reading the append only file " + name + " at offset " +
                 std::to_string(at) + (last ? " (set aof-load-truncated yes to load it without its torn tail)" : "");
        }
        return Truncate(path, name, keep, &batch, loaded, multi_at != std::string::npos);
      }
      if (server_.commands().Find(command[0]) == nullptr) {
        return "Unknown command '" + command[0] + "' reading the append only file " + name + " at offset " +
               std::to_string(at);
      }
      if (protocol::EqualsIgnoreCase(command[0], "MULTI")) multi_at = at;
      if (protocol::EqualsIgnoreCase(command[0], "EXEC")) multi_at = std::string::npos;
      batch.push_back(std::move(command));
      if (batch.size() >= 1024 && multi_at == std::string::npos) Run(&batch, loaded);
    }
    if (multi_at != std::string::npos) {
      if (!last || !truncate_ok) {
        return "Unexpected end of file reading the append only file " + name + " at offset " +
               std::to_string(data.size()) + ": a MULTI without its EXEC";
      }
      return Truncate(path, name, multi_at, &batch, loaded, true);
    }
    Run(&batch, loaded);
    return std::nullopt;
  }

 private:
  std::optional<std::string> Truncate(const std::string& path, const std::string& name, size_t keep,
                                      std::vector<LoggedCommand>* batch, uint64_t* loaded, bool in_multi) {
    spdlog::warn("!!! Warning: short read while loading the AOF file {}!!!", name);
    // An unfinished transaction's commands were queued, never run: they go with the tail.
    if (in_multi) {
      while (!batch->empty() && !protocol::EqualsIgnoreCase(batch->back()[0], "MULTI")) batch->pop_back();
      if (!batch->empty()) batch->pop_back();
    }
    Run(batch, loaded);
    if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
      return "Error truncating the AOF file " + name + ": " + std::strerror(errno);
    }
    spdlog::warn("AOF {} loaded anyway because aof-load-truncated is enabled (cut at offset {})", name, keep);
    return std::nullopt;
  }

  void Run(std::vector<LoggedCommand>* batch, uint64_t* loaded) {
    if (batch->empty()) return;
    std::vector<std::vector<std::string_view>> views;
    views.reserve(batch->size());
    for (const LoggedCommand& c : *batch) views.emplace_back(c.begin(), c.end());
    std::string out;
    Dispatcher dispatcher(server_, *session_);
    auto done = asio::co_spawn(
        server_.shards().context(0),
        [&]() -> awaitable<void> { co_await dispatcher.Execute(std::span(views), &out); }, asio::use_future);
    done.get();
    *loaded += batch->size();
    batch->clear();
  }

  Server& server_;
  std::shared_ptr<ClientInfo> info_;
  std::unique_ptr<ClientSession> session_;
};

std::optional<std::string> AppendOnlyFile::PrepareDirectory() {
  std::error_code ec;
  std::filesystem::create_directories(DirPath(), ec);
  if (ec) return "Can't open or create append-only dir " + DirPath() + ": " + ec.message();
  std::lock_guard io(io_mu_);
  files_.clear();
  std::string manifest = PathOf(server_.config().Snapshot().appendfilename + ".manifest");
  if (!std::filesystem::exists(manifest)) return std::nullopt;
  std::string text;
  if (auto err = ReadWhole(manifest, &text)) return err;
  if (auto err = ParseManifest(text, manifest, &files_)) return err;
  for (const AofFileEntry& f : files_) {
    if (f.type == 'b') base_seq_ = std::max(base_seq_, f.seq);
    if (f.type == 'i') incr_seq_ = std::max(incr_seq_, f.seq);
  }
  return std::nullopt;
}

std::optional<std::string> AppendOnlyFile::LoadAndOpen() {
  Settings settings = server_.config().Snapshot();
  Configure(settings);
  if (!settings.appendonly) return std::nullopt;
  if (auto err = PrepareDirectory()) return err;
  if (files_.empty()) {
    // No log yet: like Redis 7.0, start one with a base of the (empty) data set.
    rewriting_.store(true);
    enabled_.store(true, std::memory_order_release);
    ClaimWalk(true);
    std::optional<std::string> err = RunRewrite(true);
    rewrites_.store(0);  // as Redis counts: the first base is no rewrite
    last_rewrite_ms_.store(-1);
    return err;
  }
  loading_.store(true);
  AofLoader loader(server_);
  uint64_t loaded = 0;
  auto started = std::chrono::steady_clock::now();
  std::vector<const AofFileEntry*> order;
  for (const AofFileEntry& f : files_) {
    if (f.type == 'b') order.insert(order.begin(), &f);
  }
  for (const AofFileEntry& f : files_) {
    if (f.type == 'i') order.push_back(&f);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const AofFileEntry& f = *order[i];
    std::string path = PathOf(f.name);
    if (!std::filesystem::exists(path)) return "The AOF file " + f.name + " named by the manifest doesn't exist";
    std::optional<std::string> err;
    if (f.type == 'b' && StartsAsRdb(path)) {
      err = server_.persistence().LoadFile(path);
    } else {
      err = loader.Replay(path, f.name, i + 1 == order.size(), settings.aof_load_truncated, &loaded);
    }
    if (err) {
      loading_.store(false);
      return err;
    }
    if (f.type == 'b') base_size_ = std::filesystem::file_size(path);
  }
  loading_.store(false);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("DB loaded from append only file: {:.3f} seconds ({} commands)", seconds, loaded);
  std::lock_guard io(io_mu_);
  // Appends go on in the last incremental file; a log without one gets a new one.
  const AofFileEntry* last_incr = nullptr;
  for (const AofFileEntry& f : files_) {
    if (f.type == 'i') last_incr = &f;
  }
  if (last_incr != nullptr) {
    std::string name = last_incr->name;
    int64_t seq = last_incr->seq;
    files_.erase(files_.begin() + (last_incr - files_.data()));
    if (auto err = OpenIncrement(seq, name)) return err;
  } else {
    if (auto err = OpenIncrement(incr_seq_ + 1)) return err;
    std::string error;
    if (!WriteManifest(&error)) return error;
  }
  enabled_.store(true, std::memory_order_release);
  return std::nullopt;
}

}  // namespace lapse::server
