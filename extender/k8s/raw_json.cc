#include "extender/k8s/raw_json.h"

#include <cstdint>
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

#if defined(__SSE2__)
// The bytes of a 64-byte block that matter to SkipContainer, one bit each (bit k: byte k).
struct BlockMasks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;
  explicit BlockMasks(const char* p) {
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), case_bit = _mm_set1_epi8(0x20);
    // '[' and '{' differ only in bit 0x20, as do ']' and '}': one compare finds both.
    const __m128i o = _mm_set1_epi8('{'), c = _mm_set1_epi8('}');
    for (int k = 0; k < 4; ++k) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      __m128i folded = _mm_or_si128(v, case_bit);
      auto bits = [&](__m128i eq) { return uint64_t(static_cast<uint32_t>(_mm_movemask_epi8(eq))) << (16 * k); };
      quote |= bits(_mm_cmpeq_epi8(v, q));
      backslash |= bits(_mm_cmpeq_epi8(v, bs));
      open |= bits(_mm_cmpeq_epi8(folded, o));
      close |= bits(_mm_cmpeq_epi8(folded, c));
    }
  }
};
#endif

// Inline: without -mpopcnt, __builtin_popcountll is a call into libgcc.
int Popcount(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// Bit k of the result is the XOR of bits 0..k of x: with x the quotes of a block, the bits from
// an opening quote up to (not including) its closing quote.
uint64_t PrefixXor(uint64_t x) {
  for (int shift = 1; shift < 64; shift *= 2) x ^= x << shift;
  return x;
}

// t[i] is '{' or '['; returns the index past its matching close. Outside strings only quotes and
// brackets matter, inside them only quotes and backslashes.
// Fast path (x86-64): 64 bytes at a time, each byte class as a bit mask. In a block without
// backslashes, the quotes' prefix XOR masks the strings out; the brackets left change the depth by
// their popcounts, and only a block where the depth could reach zero is walked bit by bit. A Node
// is ~3 KB with a quote every ~8 bytes: visiting each quote cost ~2 ns a byte, this ~0.1.
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
    int closes = Popcount(close);
    if (depth > closes) {
      depth += Popcount(open) - closes;
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
