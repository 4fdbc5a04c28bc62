#pragma once
// Helpers for reading the text of `nvidia-smi topo -m`: splitting lines into fields that remember
// where they came from, so that the parser can report "line L, column C" for any field, and reading
// the CPU and NUMA lists of the affinity columns, and the small numbers of device names and NUMA ids.
//
// Two splitting rules, because nvidia-smi prints tabs but published copies often expand them:
//   SplitOnWhitespace: fields are runs of non-blank characters (spaces and tabs both separate).
//   SplitOnTabs:       every tab separates, empty fields are kept, each field is trimmed of spaces.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace topofit {

struct TextField {
  std::string_view text;  // Trimmed; may be empty (SplitOnTabs only).
  int column = 1;         // 1-based character column in the raw line (what error messages show).
  int visual = 0;         // 0-based display column with tab stops every 8 (for aligning columns).
};

std::vector<TextField> SplitOnWhitespace(std::string_view line);
std::vector<TextField> SplitOnTabs(std::string_view line);

bool IsBlank(std::string_view line);

// `text` without terminal control sequences (CSI: ESC '[', parameter and intermediate bytes, one final
// byte @..~). nvidia-smi underlines the matrix's header row with ESC[4m ... ESC[0m, even when its output
// is not a terminal (driver 580.159.04). A lone ESC not followed by '[' is kept.
std::string StripTerminalEscapes(std::string_view text);

// Display column of byte offset `offset` in `line` (tab stops every 8).
int VisualColumn(std::string_view line, size_t offset);

// Reads `s` as std::from_chars reads an int and accepts it when all of `s` is read and the value is in
// [0, limit): "12" is 12; "", "1x", "99999999999" and "-1" are refused; "-0" reads as 0.
bool ParseSmallInt(std::string_view s, int limit, int* out);

// Reads an id list as nvidia-smi prints CPU Affinity and NUMA Affinity: numbers and low-high ranges
// joined by commas ("0", "0-1", "0,2", "0-11,24-35", "0-0,8-8"), every number below `limit` and every
// range with low <= high. Fills `ranges` with the (low, high) pairs in order (a lone number n is
// (n, n)). Returns false, leaving `ranges` unspecified, for anything else: "", "N/A", "0-", "1-0",
// ",0", "0,,1", signs, spaces.
bool ParseIdList(std::string_view text, int limit, std::vector<std::pair<int, int>>* ranges);

}  // namespace topofit
