// File: protocol/split_args.cc
//
// A transcription of Redis's sdssplitargs, where the end of the view plays the role of the
// terminating NUL: inline commands and configuration lines are split by the same rules.
#include "protocol/split_args.h"

#include <algorithm>
#include <cctype>

namespace lapse::protocol {

namespace {

// sdssplitargs skips isspace() between arguments, yet an unquoted argument ends only at
// ' ', '\t', '\r' or '\n' (so "a\vb" is one argument).
bool IsCSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

bool SplitArgs(std::string_view line, std::string* unescaped, std::vector<std::string_view>* args) {
  line = line.substr(0, std::min(line.size(), line.find('\0')));
  const size_t n = line.size();
  if (unescaped->size() < n) unescaped->resize(n);
  char* store = unescaped->data();
  auto at = [&](size_t i) { return i < n ? line[i] : '\0'; };

  size_t p = 0;
  while (true) {
    while (p < n && IsCSpace(line[p])) ++p;
    if (p == n) return true;

    const size_t start = p;
    char* out = store;
    bool in_double = false;
    bool in_single = false;
    bool quoted = false;
    bool done = false;
    while (!done) {
      const char c = at(p);
      if (in_double) {
        if (c == '\\' && at(p + 1) == 'x' && IsHex(at(p + 2)) && IsHex(at(p + 3))) {
          *out++ = static_cast<char>(HexValue(at(p + 2)) * 16 + HexValue(at(p + 3)));
          p += 3;
        } else if (c == '\\' && at(p + 1) != '\0') {
          ++p;
          switch (at(p)) {
            case 'n': *out++ = '\n'; break;
            case 'r': *out++ = '\r'; break;
            case 't': *out++ = '\t'; break;
            case 'b': *out++ = '\b'; break;
            case 'a': *out++ = '\a'; break;
            default: *out++ = at(p); break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end of the line.
          if (at(p + 1) != '\0' && !IsCSpace(at(p + 1))) return false;
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          *out++ = c;
        }
      } else if (in_single) {
        if (c == '\\' && at(p + 1) == '\'') {
          ++p;
          *out++ = '\'';
        } else if (c == '\'') {
          if (at(p + 1) != '\0' && !IsCSpace(at(p + 1))) return false;
          done = true;
        } else if (c == '\0') {
          return false;
        } else {
          *out++ = c;
        }
      } else {
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_double = quoted = true;
            break;
          case '\'':
            in_single = quoted = true;
            break;
          default:
            *out++ = c;
            break;
        }
      }
      if (p < n) ++p;
    }
    const size_t len = static_cast<size_t>(out - store);
    if (quoted) {
      args->emplace_back(store, len);
      store = out;
    } else {
      args->emplace_back(line.data() + start, len);  // unquoted bytes are contiguous
    }
  }
}

}  // namespace lapse::protocol
