#pragma once
// The string toolkit: the few text helpers every parser of topofit needs, written once.
//
// Contract: pure functions on bytes; "space" means ASCII whitespace (' ', \t, \n, \v, \f, \r), and
// case folding is ASCII only (Kubernetes names, labels and CSV headers are ASCII). Never throw.

#include <string>
#include <string_view>
#include <vector>

namespace topofit {

// `s` without leading and trailing ASCII whitespace (a view into `s`).
std::string_view Trim(std::string_view s);

// `s` with A-Z turned into a-z; other bytes unchanged.
std::string AsciiLower(std::string_view s);

// True when `a` and `b` are equal ignoring ASCII case.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The lines of `text` without their "\n" or "\r\n" endings (views into `text`). Never empty for
// non-empty text; a trailing newline does not add an empty last line; "" gives no lines.
std::vector<std::string_view> SplitLines(std::string_view text);

// The pieces of `s` between each `sep` (views into `s`): "a,,b" gives "a", "", "b"; "" gives one
// empty piece. Pieces are not trimmed.
std::vector<std::string_view> Split(std::string_view s, char sep);

// Natural order, as people sort node names: runs of ASCII digits compare as numbers ("gpu-node-2" before
// "gpu-node-10"; leading zeros do not count, "r007" == "r7" as numbers), other bytes compare as bytes.
// Names equal that way are ordered bytewise ("r07" before "r7"), so this is a strict weak order in
// which only equal strings are equivalent. Digit runs of any length (no overflow).
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace topofit
