#pragma once
// Minimal JSON text building for replies on the hot path (filter with 5,000 names must cost
// microseconds; a DOM library would allocate per node). Escapes like Go's encoding/json does for
// the characters that matter (quotes, backslash, control characters, and <, >, & as \u003c...).

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace topofit {

namespace json_writer_internal {
// True for the bytes AppendJsonString must escape.
constexpr bool NeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&'; }
constexpr std::array<uint8_t, 256> kEscapeTable = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = NeedsEscape(static_cast<unsigned char>(c));
  return t;
}();
// No byte of s needs escaping. Branch-free over the bytes: a table lookup per byte beats six
// comparisons and a branch per byte; with SSE2 (every x86-64), 16 bytes at a time (an EC2 node
// name is 27 bytes: two overlapping loads instead of 27 lookups).
inline bool IsPlain(std::string_view s) {
#if defined(__SSE2__)
  if (s.size() >= 16) {
    auto escapes = [](const char* p) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i low = _mm_set1_epi8(0x1F);
      auto eq = [&v](char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
      const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, low), low);  // Bytes below 0x20.
      const __m128i any = _mm_or_si128(_mm_or_si128(control, _mm_or_si128(eq('"'), eq('\\'))),
                                       _mm_or_si128(_mm_or_si128(eq('<'), eq('>')), eq('&')));
      return _mm_movemask_epi8(any);
    };
    int found = 0;
    size_t i = 0;
    for (; i + 16 <= s.size(); i += 16) found |= escapes(s.data() + i);
    if (i < s.size()) found |= escapes(s.data() + s.size() - 16);  // The tail, overlapping.
    return found == 0;
  }
#endif
  uint8_t any = 0;
  for (unsigned char c : s) any |= kEscapeTable[c];
  return any == 0;
}
}  // namespace json_writer_internal

inline void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (json_writer_internal::IsPlain(s)) [[likely]] {
    // The common case (every Kubernetes name): appends only.
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  size_t first = 0;
  while (!json_writer_internal::NeedsEscape(static_cast<unsigned char>(s[first]))) ++first;
  out += '"';
  size_t run = 0;  // Runs of plain bytes are appended in one piece.
  for (size_t i = first; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (!json_writer_internal::NeedsEscape(c)) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:  // Control characters, and <, >, & as Go writes them.
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

// JsonBuffer: appends to a std::string through a raw pointer, for replies with thousands of entries
// (each std::string append or push_back is an out-of-line call with its own capacity check; a
// 5,000-entry reply made about eight per entry). Reserve room for an entry once, then Put without
// checks. One JsonBuffer per string at a time; the string has its final size after Finish or
// destruction, and must not be touched in between.
class JsonBuffer {
 public:
  explicit JsonBuffer(std::string& out) : out_(out), pos_(out.size()) {}
  JsonBuffer(const JsonBuffer&) = delete;
  JsonBuffer& operator=(const JsonBuffer&) = delete;
  ~JsonBuffer() { Finish(); }

  // Makes room for n more bytes of Put.
  void Reserve(size_t n) {
    if (out_.size() - pos_ < n) Grow(n);
  }
  void Put(char c) { out_.data()[pos_++] = c; }
  void Put(std::string_view s) {
    if (s.empty()) return;  // An empty view's data() may be null, which memcpy must not get.
    std::memcpy(out_.data() + pos_, s.data(), s.size());
    pos_ += s.size();
  }
  // s as a JSON string (escaped as AppendJsonString does); needs MaxJsonBytes(s) reserved.
  static size_t MaxJsonBytes(std::string_view s) { return 6 * s.size() + 2; }
  void PutJson(std::string_view s);
  void Finish() { out_.resize(pos_); }

 private:
  // Into the string's reserved room first; past it, doubling. (Doubling the size instead would
  // copy and zero-fill a whole full-node reply - megabytes - to append one brace.)
  void Grow(size_t n) {
    size_t want = pos_ + n;
    out_.resize(want <= out_.capacity() ? out_.capacity() : std::max(want, 2 * out_.capacity()));
  }
  std::string& out_;  // Sized past pos_ while writing; the bytes past pos_ are scratch.
  size_t pos_;
};

inline void JsonBuffer::PutJson(std::string_view s) {
  if (json_writer_internal::IsPlain(s)) [[likely]] {
    char* p = out_.data() + pos_;
    p[0] = '"';
    if (!s.empty()) std::memcpy(p + 1, s.data(), s.size());  // data() may be null when empty.
    p[s.size() + 1] = '"';
    pos_ += s.size() + 2;
    return;
  }
  std::string escaped;
  AppendJsonString(escaped, s);
  Put(escaped);
}

inline std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

// {"error":"..."} - the body of 4xx replies of prioritize, preempt and the query endpoints.
inline std::string JsonError(std::string_view message) {
  std::string out = "{\"error\":";
  AppendJsonString(out, message);
  out += '}';
  return out;
}

}  // namespace topofit
