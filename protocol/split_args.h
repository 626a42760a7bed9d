// File: protocol/split_args.h
//
// Redis's sdssplitargs, the splitting of an inline command (`SET k "a b"`) and of a
// configuration line: words separated by white space; "double" quotes with \n-style and
// \xHH escapes, 'single' quotes with \' only, quotes may open anywhere in a word, and a
// closing quote must end its word. A NUL byte ends the line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lapse::protocol {

// Appends the words of `line` to *args; false when the quotes do not balance. Unquoted words
// are views into `line`; quoted ones are unescaped into *unescaped, sized up front (unescaping
// never lengthens) so that it never reallocates while views into it are handed out: they stay
// valid until the next call with the same buffer.
bool SplitArgs(std::string_view line, std::string* unescaped, std::vector<std::string_view>* args);

}  // namespace lapse::protocol
