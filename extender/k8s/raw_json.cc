#include "extender/k8s/raw_json.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "extender/k8s/json_read.h"

namespace topofit::k8s::json {
namespace {

// t[i] is an opening quote; returns the index past the closing one (the end of an unterminated text).
size_t SkipString(std::string_view t, size_t i) { return std::min(StringEnd(t, i), t.size()); }

#if defined(__SSE2__)
// The bytes of a 64-byte block that matter to SkipContainer, one bit each (bit k: byte k).
// Written out chunk by chunk: as loops, GCC kept the shifts variable and the scan took 1.5x as long
// (raw_json_perftest: 1220 against 815 us).
struct BlockMasks {
  uint64_t quote, backslash, open, close;
  explicit BlockMasks(const char* p) {
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), case_bit = _mm_set1_epi8(0x20);
    // '[' and '{' differ only in bit 0x20, as do ']' and '}': one compare finds both.
    const __m128i o = _mm_set1_epi8('{'), c = _mm_set1_epi8('}');
    const __m128i v0 = Load(p), v1 = Load(p + 16), v2 = Load(p + 32), v3 = Load(p + 48);
    auto mask = [](__m128i e0, __m128i e1, __m128i e2, __m128i e3) {
      return uint64_t(Bits(e0)) | uint64_t(Bits(e1)) << 16 | uint64_t(Bits(e2)) << 32 | uint64_t(Bits(e3)) << 48;
    };
    auto eq = [](__m128i v, __m128i x) { return _mm_cmpeq_epi8(v, x); };
    auto folded = [&](__m128i v) { return _mm_or_si128(v, case_bit); };
    quote = mask(eq(v0, q), eq(v1, q), eq(v2, q), eq(v3, q));
    backslash = mask(eq(v0, bs), eq(v1, bs), eq(v2, bs), eq(v3, bs));
    open = mask(eq(folded(v0), o), eq(folded(v1), o), eq(folded(v2), o), eq(folded(v3), o));
    close = mask(eq(folded(v0), c), eq(folded(v1), c), eq(folded(v2), c), eq(folded(v3), c));
  }
  static __m128i Load(const char* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static uint32_t Bits(__m128i e) { return static_cast<uint32_t>(_mm_movemask_epi8(e)); }
};
#endif

// Bit k of the result is the XOR of bits 0..k of x: with x the quotes of a block, the bits from
// an opening quote up to (not including) its closing quote.
uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// t[i] is '{' or '['; returns the index past its matching close. Outside strings only quotes and
// brackets matter, inside them only quotes and backslashes.
// Fast path (x86-64): 64 bytes at a time, each byte class as a bit mask. In a block without
// backslashes, the quotes' prefix XOR masks the strings out; the brackets left change the depth by
// their popcounts, and only a block where the depth could reach zero is walked bit by bit. A Node
// is ~3 KB with a quote every ~8 bytes: visiting each one was a quarter of a full-node filter's
// time (perf); this scans ~4 GB/s (raw_json_perftest).
// Blocks with a backslash (rare in Kubernetes objects) take the bit-by-bit walk, which handles
// escapes.
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
  auto visit_bits = [&](size_t base, uint64_t bits, size_t* end) -> bool {
    for (; bits; bits &= bits - 1) {
      size_t pos = base + static_cast<size_t>(__builtin_ctzll(bits));
      if (visit(pos)) return *end = pos + 1, true;
    }
    return false;
  };
  size_t end;
#if defined(__SSE2__)
  for (; i + 64 <= t.size(); i += 64) {
    BlockMasks b(t.data() + i);
    uint64_t quote = b.quote, backslash = b.backslash, open = b.open, close = b.close;
    if (backslash || i < skip_to) {
      if (visit_bits(i, quote | backslash | open | close, &end)) return end;
      continue;
    }
    uint64_t strings = PrefixXor(quote) ^ (in_string ? ~uint64_t(0) : 0);
    open &= ~strings;
    close &= ~strings;
    int closes = std::popcount(close);
    if (depth > closes) {
      depth += std::popcount(open) - closes;
      in_string = strings >> 63;
      continue;
    }
    // The depth may reach zero here: walk the brackets in order.
    for (uint64_t bits = open | close; bits; bits &= bits - 1) {
      int k = __builtin_ctzll(bits);
      if (open >> k & 1) {
        ++depth;
      } else if (--depth == 0) {
        return i + static_cast<size_t>(k) + 1;
      }
    }
    in_string = strings >> 63;
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
                                                              std::initializer_list<std::string_view> path,
                                                              bool keys_unique) {
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
      // An escaped key may decode to `want` (or not): the caller falls back to its parse.
      if (key.find('\\') != std::string_view::npos) return std::nullopt;
      if (KeyIs(key, want)) {
        found = value;
        if (keys_unique) break;
      }
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
