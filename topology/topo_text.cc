#include "topology/topo_text.h"

#include <charconv>

#include "base/strings.h"

namespace topofit {

namespace {
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A whole decimal number in [0, limit): digits only, no sign.
bool ParseId(std::string_view s, int limit, int* out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out < limit;
}
}  // namespace

bool ParseSmallInt(std::string_view s, int limit, int* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0 && *out < limit;
}

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

bool ParseIdList(std::string_view text, int limit, std::vector<std::pair<int, int>>* ranges) {
  ranges->clear();
  for (std::string_view item : Split(text, ',')) {
    size_t dash = item.find('-');
    int low = 0, high = 0;
    if (dash == std::string_view::npos) {
      if (!ParseId(item, limit, &low)) return false;
      high = low;
    } else if (!ParseId(item.substr(0, dash), limit, &low) || !ParseId(item.substr(dash + 1), limit, &high) ||
               low > high) {
      return false;
    }
    ranges->emplace_back(low, high);
  }
  return true;
}

std::string StripTerminalEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < text.size() && !(text[j] >= '@' && text[j] <= '~')) ++j;
      i = j;  // The final byte (or the end).
      continue;
    }
    out += text[i];
  }
  return out;
}

}  // namespace topofit
