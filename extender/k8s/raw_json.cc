#include "extender/k8s/raw_json.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "extender/k8s/json_read.h"

namespace topofit::k8s::json {
namespace {

size_t SkipSpace(std::string_view t, size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r' || t[i] == '\t')) ++i;
  return i;
}

// t[i] is an opening quote; returns the index past the closing one.
size_t SkipString(std::string_view t, size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '"') return i + 1;
    if (t[i] == '\\') ++i;  // Escapes the next byte (\uXXXX's digits need no care).
  }
  return t.size();
}

// t[i] is '{' or '['; returns the index past its matching close. Outside strings only quotes and
// brackets matter, inside them only quotes and backslashes. With SSE2 (every x86-64) each 16-byte
// block yields a bit mask of those bytes and only the set bits are visited: a Node has ~10% such
// bytes, so this runs several times faster than a byte loop or a memchr per string.
size_t SkipContainer(std::string_view t, size_t i) {
  int depth = 0;
  bool in_string = false;
  size_t skip_to = 0;  // A backslash escapes the byte after it: positions before skip_to are ignored.
  auto visit = [&](size_t pos) -> bool {  // True when the container closes at pos.
    if (pos < skip_to) return false;
    char c = t[pos];
    if (in_string) {
      if (c == '"') in_string = false;
      else if (c == '\\') skip_to = pos + 2;
      return false;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') return --depth == 0;
    return false;
  };
#if defined(__SSE2__)
  auto eq = [](__m128i v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
  for (; i + 16 <= t.size(); i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t.data() + i));
    __m128i hits = _mm_or_si128(_mm_or_si128(eq(v, '"'), eq(v, '\\')),
                                _mm_or_si128(_mm_or_si128(eq(v, '{'), eq(v, '}')), _mm_or_si128(eq(v, '['), eq(v, ']'))));
    for (unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hits)); mask; mask &= mask - 1) {
      size_t pos = i + static_cast<size_t>(__builtin_ctz(mask));
      if (visit(pos)) return pos + 1;
    }
  }
#endif
  for (; i < t.size(); ++i)
    if (visit(i)) return i + 1;
  return t.size();
}

}  // namespace

size_t SkipValue(std::string_view t, size_t i) {
  i = SkipSpace(t, i);
  if (i >= t.size()) return t.size();
  char c = t[i];
  if (c == '"') return SkipString(t, i);
  if (c == '{' || c == '[') return SkipContainer(t, i);
  // Number, true, false, null.
  while (i < t.size() && !std::strchr(",}] \t\r\n", t[i])) ++i;
  return i;
}

std::optional<std::vector<std::string_view>> RawArrayElements(std::string_view t,
                                                              std::initializer_list<std::string_view> path) {
  size_t i = SkipSpace(t, 0);
  for (std::string_view want : path) {
    if (i >= t.size() || t[i] != '{') return std::nullopt;
    size_t found = std::string_view::npos;
    i = SkipSpace(t, i + 1);
    while (i < t.size() && t[i] == '"') {
      size_t key_end = SkipString(t, i);
      std::string_view key = t.substr(i + 1, key_end - i - 2);
      i = SkipSpace(t, key_end);
      if (i >= t.size() || t[i] != ':') return std::nullopt;
      size_t value = SkipSpace(t, i + 1);
      if (KeyIs(key, want) && key.find('\\') == std::string_view::npos) found = value;
      i = SkipSpace(t, SkipValue(t, value));
      if (i < t.size() && t[i] == ',') i = SkipSpace(t, i + 1);
    }
    if (found == std::string_view::npos) return std::nullopt;
    i = found;
  }
  if (i >= t.size() || t[i] != '[') return std::nullopt;
  std::vector<std::string_view> out;
  i = SkipSpace(t, i + 1);
  while (i < t.size() && t[i] != ']') {
    size_t end = SkipValue(t, i);
    out.push_back(t.substr(i, end - i));
    i = SkipSpace(t, end);
    if (i < t.size() && t[i] == ',') i = SkipSpace(t, i + 1);
  }
  return out;
}

}  // namespace topofit::k8s::json
