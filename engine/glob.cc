#include "engine/glob.h"

#include <cctype>

namespace lapse::engine {

namespace {

char Fold(char c, bool nocase) { return nocase ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c; }

// Matches one bracket class starting after '['; advances *p past ']' and reports a match.
bool MatchClass(std::string_view pattern, size_t* p, char c, bool nocase) {
  bool negate = false;
  bool matched = false;
  size_t i = *p;
  if (i < pattern.size() && pattern[i] == '^') {
    negate = true;
    ++i;
  }
  while (i < pattern.size() && pattern[i] != ']') {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      ++i;
      if (Fold(pattern[i], nocase) == Fold(c, nocase)) matched = true;
    } else if (i + 2 < pattern.size() && pattern[i + 1] == '-') {
      char lo = Fold(pattern[i], nocase), hi = Fold(pattern[i + 2], nocase);
      if (lo > hi) std::swap(lo, hi);
      char f = Fold(c, nocase);
      if (f >= lo && f <= hi) matched = true;
      i += 2;
    } else if (Fold(pattern[i], nocase) == Fold(c, nocase)) {
      matched = true;
    }
    ++i;
  }
  // At ']', or at the end for an unterminated class, which then ends the pattern as in Redis.
  // In that case stop on the last character rather than one past it: the caller steps over
  // the class with ++p, and landing beyond the end made "[abc" never match anything ("a"
  // included) because the final check wants p == pattern.size(). Redis does the same
  // (pattern--, then the loop's pattern++).
  if (i >= pattern.size()) i = pattern.size() - 1;
  *p = i;
  return negate ? !matched : matched;
}

// `skip_longer` is Redis's skipLongerMatches: set once a `*` has tried every remaining suffix
// of the text and failed. The pattern between two stars consumes a fixed number of
// characters, so when an inner `*` fails for every suffix from position s, an outer `*`
// that lets it start later (at s' > s) can only fail too: every enclosing `*` gives up at
// once. Without it, "a*a*a*...*b" against "aaaa...a" tried every way to split the text
// among the stars, exponential in the star count (the header's "linear-ish" claim was false).
bool Match(std::string_view pattern, std::string_view text, bool nocase, int depth, bool* skip_longer) {
  if (depth > 1000) return false;
  size_t p = 0, t = 0;
  while (p < pattern.size() && t < text.size()) {
    char pc = pattern[p];
    if (pc == '*') {
      while (p + 1 < pattern.size() && pattern[p + 1] == '*') ++p;
      if (p + 1 == pattern.size()) return true;
      for (size_t k = t; k < text.size(); ++k) {
        if (Match(pattern.substr(p + 1), text.substr(k), nocase, depth + 1, skip_longer)) return true;
        if (*skip_longer) return false;
      }
      *skip_longer = true;
      return false;
    }
    if (pc == '?') {
      ++t;
    } else if (pc == '[') {
      ++p;
      if (!MatchClass(pattern, &p, text[t], nocase)) return false;
      ++t;
    } else {
      if (pc == '\\' && p + 1 < pattern.size()) pc = pattern[++p];
      if (Fold(pc, nocase) != Fold(text[t], nocase)) return false;
      ++t;
    }
    ++p;
  }
  if (t < text.size()) return false;
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  bool skip_longer = false;
  return Match(pattern, text, nocase, 0, &skip_longer);
}

}  // namespace lapse::engine
