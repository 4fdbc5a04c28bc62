#include "topology/topo_text.h"

#include "base/strings.h"

namespace topofit {

namespace {
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
}  // namespace

bool IsBlank(std::string_view line) { return Trim(line).empty(); }

int VisualColumn(std::string_view line, size_t offset) {
  int col = 0;
  for (size_t i = 0; i < offset && i < line.size(); ++i) col = line[i] == '\t' ? (col / 8 + 1) * 8 : col + 1;
  return col;
}

std::vector<TextField> SplitOnWhitespace(std::string_view line) {
  std::vector<TextField> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    if (i >= line.size()) break;
    size_t start = i;
    while (i < line.size() && !IsSpace(line[i])) ++i;
    fields.push_back({line.substr(start, i - start), static_cast<int>(start) + 1, VisualColumn(line, start)});
  }
  return fields;
}

std::vector<TextField> SplitOnTabs(std::string_view line) {
  std::vector<TextField> fields;
  size_t start = 0;
  while (true) {
    size_t end = line.find('\t', start);
    if (end == std::string_view::npos) end = line.size();
    std::string_view raw = line.substr(start, end - start);
    size_t lead = 0;
    while (lead < raw.size() && raw[lead] == ' ') ++lead;
    size_t at = start + lead;
    fields.push_back({Trim(raw), static_cast<int>(at) + 1, VisualColumn(line, at)});
    if (end == line.size()) break;
    start = end + 1;
  }
  return fields;
}

}  // namespace topofit
