// File: tests/engine/glob_test.cc
//
// GlobMatch follows Redis's stringmatchlen: `*`, `?`, `[abc]`, `[^abc]`, `[a-z]` (either
// order), `\x` escapes (also inside classes), optional case folding. Beyond the table of
// cases, a randomized cross-check compares it with a small dynamic-programming matcher over
// well-formed patterns, and hostile star patterns are checked for their answer only: the
// test finishes only if they are answered in polynomial time, without asserting on a clock.

#include "engine/glob.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace lapse::engine {
namespace {

using namespace std::string_literals;

TEST(GlobTest, Literals) {
  EXPECT_TRUE(GlobMatch("hello", "hello"));
  EXPECT_FALSE(GlobMatch("hello", "hell"));
  EXPECT_FALSE(GlobMatch("hell", "hello"));
  EXPECT_FALSE(GlobMatch("hello", "Hello"));
  EXPECT_TRUE(GlobMatch("a\0b"s, "a\0b"s));  // binary safe
  EXPECT_FALSE(GlobMatch("a\0b"s, "a\0c"s));
  EXPECT_FALSE(GlobMatch("a\0b"s, "a"));
}

TEST(GlobTest, EmptyPatternAndText) {
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
  EXPECT_FALSE(GlobMatch("a", ""));
  EXPECT_FALSE(GlobMatch("?", ""));
  EXPECT_FALSE(GlobMatch("[a]", ""));
  // Trailing stars match the empty rest. (Redis's stringmatchlen alone says no for an empty
  // key against "*", but KEYS and SCAN short-circuit "*" to match everything, empty key
  // included; lapse gives that answer directly.)
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("**", ""));
  EXPECT_TRUE(GlobMatch("a*", "a"));
  EXPECT_TRUE(GlobMatch("a***", "a"));
}

TEST(GlobTest, Star) {
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("*", "\0\xff"s));
  EXPECT_TRUE(GlobMatch("h*llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_FALSE(GlobMatch("h*llo", "heeeellx"));
  EXPECT_TRUE(GlobMatch("*llo", "hello"));
  EXPECT_TRUE(GlobMatch("he*", "hello"));
  EXPECT_FALSE(GlobMatch("he*", "hxllo"));
  EXPECT_TRUE(GlobMatch("*l*", "hello"));
  EXPECT_FALSE(GlobMatch("*z*", "hello"));
  EXPECT_TRUE(GlobMatch("user:*:name", "user:1234:name"));
  EXPECT_TRUE(GlobMatch("user:*:name", "user::name"));
  EXPECT_FALSE(GlobMatch("user:*:name", "user:1234:names"));
  EXPECT_TRUE(GlobMatch("a**b", "ab"));
  EXPECT_TRUE(GlobMatch("a**b", "axxxb"));
  EXPECT_TRUE(GlobMatch("*a*b*c*", "xxaxxbxxcxx"));
  EXPECT_FALSE(GlobMatch("*a*b*c*", "xxcxxbxxaxx"));
  // Backtracking: the first 'b' is not the right one.
  EXPECT_TRUE(GlobMatch("*bc", "abcbc"));
  EXPECT_TRUE(GlobMatch("a*bcd", "abcbcbcd"));
}

TEST(GlobTest, QuestionMark) {
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_TRUE(GlobMatch("h?llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h?llo", "hllo"));
  EXPECT_FALSE(GlobMatch("h?llo", "heello"));
  EXPECT_TRUE(GlobMatch("???", "abc"));
  EXPECT_FALSE(GlobMatch("???", "ab"));
  EXPECT_TRUE(GlobMatch("?", "\0"s));
  EXPECT_TRUE(GlobMatch("*?", "a"));
  EXPECT_FALSE(GlobMatch("?*?", "a"));
}

TEST(GlobTest, Classes) {
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hllo"));
  EXPECT_TRUE(GlobMatch("[abc]", "b"));
  EXPECT_FALSE(GlobMatch("[abc]", "d"));
  EXPECT_FALSE(GlobMatch("[abc]", "ab"));
  // Negation.
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("[^a]", "b"));
  EXPECT_FALSE(GlobMatch("[^a]", "a"));
  EXPECT_FALSE(GlobMatch("[^a]", ""));
  EXPECT_TRUE(GlobMatch("[^abc]x", "dx"));
  // Ranges, including reversed ones.
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_FALSE(GlobMatch("h[a-b]llo", "hcllo"));
  EXPECT_TRUE(GlobMatch("[a-z]", "a"));
  EXPECT_TRUE(GlobMatch("[a-z]", "m"));
  EXPECT_TRUE(GlobMatch("[a-z]", "z"));
  EXPECT_FALSE(GlobMatch("[a-z]", "A"));
  EXPECT_FALSE(GlobMatch("[a-z]", "0"));
  EXPECT_TRUE(GlobMatch("[z-a]", "m"));
  EXPECT_TRUE(GlobMatch("[0-9][0-9]", "42"));
  EXPECT_FALSE(GlobMatch("[0-9][0-9]", "4x"));
  EXPECT_TRUE(GlobMatch("[^0-9]", "x"));
  EXPECT_FALSE(GlobMatch("[^0-9]", "5"));
  EXPECT_TRUE(GlobMatch("[a-cx-z]", "y"));
  EXPECT_FALSE(GlobMatch("[a-cx-z]", "m"));
  // Specials lose their meaning inside a class.
  EXPECT_TRUE(GlobMatch("[*]", "*"));
  EXPECT_FALSE(GlobMatch("[*]", "a"));
  EXPECT_TRUE(GlobMatch("[?]", "?"));
  EXPECT_FALSE(GlobMatch("[?]", "a"));
  EXPECT_TRUE(GlobMatch("[[]", "["));
  // Classes combine with stars.
  EXPECT_TRUE(GlobMatch("*[0-9]", "key7"));
  EXPECT_FALSE(GlobMatch("*[0-9]", "key"));
}

TEST(GlobTest, Escapes) {
  EXPECT_TRUE(GlobMatch("\\*", "*"));
  EXPECT_FALSE(GlobMatch("\\*", "a"));
  EXPECT_FALSE(GlobMatch("\\*", "ab"));
  EXPECT_TRUE(GlobMatch("\\?", "?"));
  EXPECT_FALSE(GlobMatch("\\?", "a"));
  EXPECT_TRUE(GlobMatch("\\[a]", "[a]"));
  EXPECT_FALSE(GlobMatch("\\[a]", "a"));
  EXPECT_TRUE(GlobMatch("\\\\", "\\"));
  EXPECT_TRUE(GlobMatch("\\a", "a"));  // escaping an ordinary character is harmless
  EXPECT_TRUE(GlobMatch("a\\*b", "a*b"));
  EXPECT_FALSE(GlobMatch("a\\*b", "axb"));
  EXPECT_TRUE(GlobMatch("*\\*", "abc*"));
  EXPECT_FALSE(GlobMatch("*\\*", "abc"));
  // A trailing backslash is a literal backslash.
  EXPECT_TRUE(GlobMatch("a\\", "a\\"));
  EXPECT_FALSE(GlobMatch("a\\", "a"));
  // Escapes inside a class.
  EXPECT_TRUE(GlobMatch("[\\]]", "]"));
  EXPECT_TRUE(GlobMatch("[\\]a]", "a"));
  EXPECT_FALSE(GlobMatch("[\\]a]", "b"));
  EXPECT_TRUE(GlobMatch("[\\-]", "-"));
  EXPECT_TRUE(GlobMatch("[\\^]", "^"));
  EXPECT_TRUE(GlobMatch("[^\\]]", "a"));
  EXPECT_FALSE(GlobMatch("[^\\]]", "]"));
}

TEST(GlobTest, UnterminatedClassEndsThePattern) {
  // As in Redis: an unterminated class matches one character and ends the pattern.
  EXPECT_TRUE(GlobMatch("[abc", "a"));
  EXPECT_TRUE(GlobMatch("[abc", "c"));
  EXPECT_FALSE(GlobMatch("[abc", "d"));
  EXPECT_FALSE(GlobMatch("[abc", "ab"));
  EXPECT_TRUE(GlobMatch("x[a-c", "xb"));
  EXPECT_TRUE(GlobMatch("[^", "a"));
  EXPECT_FALSE(GlobMatch("[", "a"));
  EXPECT_FALSE(GlobMatch("[", ""));
  EXPECT_FALSE(GlobMatch("ab[", "ab"));
  EXPECT_FALSE(GlobMatch("ab[", "abc"));
  EXPECT_TRUE(GlobMatch("*[xy", "aaay"));
}

TEST(GlobTest, NoCase) {
  EXPECT_TRUE(GlobMatch("HELLO", "hello", true));
  EXPECT_FALSE(GlobMatch("HELLO", "hello", false));
  EXPECT_TRUE(GlobMatch("hello", "HeLLo", true));
  EXPECT_TRUE(GlobMatch("h*O", "hellO", true));
  EXPECT_TRUE(GlobMatch("h*O", "hello", true));
  EXPECT_TRUE(GlobMatch("[A-Z]", "q", true));
  EXPECT_FALSE(GlobMatch("[A-Z]", "q", false));
  EXPECT_TRUE(GlobMatch("[a-z]", "Q", true));
  EXPECT_TRUE(GlobMatch("[abc]", "B", true));
  EXPECT_FALSE(GlobMatch("[^abc]", "B", true));
  EXPECT_TRUE(GlobMatch("[^abc]", "B", false));
  EXPECT_FALSE(GlobMatch("hello", "help", true));
  EXPECT_TRUE(GlobMatch("maxmemory-*", "MAXMEMORY-POLICY", true));
}

// Hostile patterns: each star multiplies the ways to split the text unless matching stops
// once a star has failed for every suffix. The texts are long enough that naive
// backtracking would not finish in any reasonable time; only the answers are asserted.
TEST(GlobTest, PathologicalStarsAreAnsweredCorrectly) {
  const std::string many_a(5000, 'a');
  std::string pattern;
  for (int i = 0; i < 30; ++i) pattern += "a*";
  pattern += "b";
  EXPECT_FALSE(GlobMatch(pattern, many_a));
  EXPECT_TRUE(GlobMatch(pattern, many_a + "b"));
  EXPECT_FALSE(GlobMatch(pattern, many_a + "bc"));
  EXPECT_FALSE(GlobMatch(pattern, many_a, true));

  // The classic Redis regression pattern.
  const std::string redis_case =
      "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
  EXPECT_FALSE(GlobMatch(redis_case, std::string(300, 'a')));

  // Stars separated by '?' and classes instead of literals.
  std::string q;
  for (int i = 0; i < 25; ++i) q += "*?";
  q += "*[b]";
  EXPECT_FALSE(GlobMatch(q, many_a));
  EXPECT_TRUE(GlobMatch(q, many_a + "b"));
  EXPECT_FALSE(GlobMatch(q, std::string(10, 'a') + "b"));  // fewer chars than '?'s

  std::string mixed;
  for (int i = 0; i < 40; ++i) mixed += "*a?";
  EXPECT_FALSE(GlobMatch(mixed + "*x", many_a));
  EXPECT_TRUE(GlobMatch(mixed + "*", many_a));
  EXPECT_TRUE(GlobMatch(mixed, many_a));

  // Very many stars: at most 1000 levels of nesting are tried; the answer stays "no" here.
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += "a*";
  deep += "b";
  EXPECT_FALSE(GlobMatch(deep, std::string(3000, 'a')));
}

// ---- Randomized cross-check against a reference matcher ----

struct Token {
  enum Kind { kLiteral, kAny, kStar, kClass } kind = kLiteral;
  char c = 0;
  bool negate = false;
  std::vector<std::pair<char, char>> ranges;  // literal members are one-character ranges
};

// Parses a well-formed pattern (every class terminated) with Redis's rules.
std::vector<Token> Parse(std::string_view p) {
  std::vector<Token> out;
  for (size_t i = 0; i < p.size(); ++i) {
    Token t;
    if (p[i] == '*') {
      t.kind = Token::kStar;
    } else if (p[i] == '?') {
      t.kind = Token::kAny;
    } else if (p[i] == '[') {
      t.kind = Token::kClass;
      ++i;
      if (i < p.size() && p[i] == '^') {
        t.negate = true;
        ++i;
      }
      while (i < p.size() && p[i] != ']') {
        if (p[i] == '\\' && i + 1 < p.size()) {
          ++i;
          t.ranges.push_back({p[i], p[i]});
        } else if (i + 2 < p.size() && p[i + 1] == '-') {
          char lo = p[i], hi = p[i + 2];
          if (lo > hi) std::swap(lo, hi);
          t.ranges.push_back({lo, hi});
          i += 2;
        } else {
          t.ranges.push_back({p[i], p[i]});
        }
        ++i;
      }
    } else {
      if (p[i] == '\\' && i + 1 < p.size()) ++i;
      t.c = p[i];
    }
    out.push_back(t);
  }
  return out;
}

bool TokenMatches(const Token& t, char c) {
  switch (t.kind) {
    case Token::kAny:
      return true;
    case Token::kLiteral:
      return t.c == c;
    case Token::kClass: {
      bool in = false;
      for (auto [lo, hi] : t.ranges) in = in || (c >= lo && c <= hi);
      return t.negate ? !in : in;
    }
    case Token::kStar:
      break;
  }
  return false;
}

bool Reference(std::string_view pattern, std::string_view text) {
  std::vector<Token> tokens = Parse(pattern);
  // dp[j] = tokens[0..i) match text[0..j)
  std::vector<char> dp(text.size() + 1, 0), next(text.size() + 1, 0);
  dp[0] = 1;
  for (const Token& t : tokens) {
    std::fill(next.begin(), next.end(), 0);
    if (t.kind == Token::kStar) {
      char any = 0;
      for (size_t j = 0; j <= text.size(); ++j) {
        any = any || dp[j];
        next[j] = any;
      }
    } else {
      for (size_t j = 1; j <= text.size(); ++j) next[j] = dp[j - 1] && TokenMatches(t, text[j - 1]);
    }
    dp.swap(next);
  }
  return dp[text.size()];
}

std::string RandomPattern(std::mt19937_64& rng) {
  static const char kAlphabet[] = "abc";
  std::string p;
  int len = static_cast<int>(rng() % 9);
  for (int i = 0; i < len; ++i) {
    switch (rng() % 8) {
      case 0:
      case 1:
        p += '*';
        break;
      case 2:
        p += '?';
        break;
      case 3: {
        p += '[';
        if (rng() % 3 == 0) p += '^';
        int members = 1 + static_cast<int>(rng() % 3);
        for (int m = 0; m < members; ++m) {
          if (rng() % 3 == 0) {
            p += kAlphabet[rng() % 3];
            p += '-';
            p += kAlphabet[rng() % 3];
          } else if (rng() % 5 == 0) {
            p += "\\]";
          } else {
            p += kAlphabet[rng() % 3];
          }
        }
        p += ']';
        break;
      }
      case 4:
        p += '\\';
        p += "*?[a"[rng() % 4];
        break;
      default:
        p += kAlphabet[rng() % 3];
        break;
    }
  }
  return p;
}

TEST(GlobTest, RandomizedAgainstReference) {
  std::mt19937_64 rng(2024);
  static const char kText[] = "abc*?[]";
  for (int iter = 0; iter < 60000; ++iter) {
    std::string pattern = RandomPattern(rng);
    std::string text;
    int len = static_cast<int>(rng() % 9);
    for (int i = 0; i < len; ++i) text += kText[rng() % (rng() % 4 == 0 ? 7 : 3)];
    ASSERT_EQ(GlobMatch(pattern, text), Reference(pattern, text))
        << "pattern='" << pattern << "' text='" << text << "'";
  }
}

}  // namespace
}  // namespace lapse::engine
