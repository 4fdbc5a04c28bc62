#pragma once
// Helpers for reading the text of `nvidia-smi topo -m`: splitting lines into fields that remember
// where they came from, so that the parser can report "line L, column C" for any field.
//
// Two splitting rules, because nvidia-smi prints tabs but published copies often expand them:
//   SplitOnWhitespace: fields are runs of non-blank characters (spaces and tabs both separate).
//   SplitOnTabs:       every tab separates, empty fields are kept, each field is trimmed of spaces.

#include <string_view>
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

// Display column of byte offset `offset` in `line` (tab stops every 8).
int VisualColumn(std::string_view line, size_t offset);

}  // namespace topofit
