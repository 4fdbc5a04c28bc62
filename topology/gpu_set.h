#pragma once
// GpuSet: a set of GPU indices of one node (0..63) as a bit mask.
//
// A value type; cheap to copy and compare. Bit i set means GPU i is in the set. Exact set selection
// is guaranteed for nodes of up to 16 GPUs (see set_selector.h); the type itself holds up to 64.

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace topofit {

class GpuSet {
 public:
  static constexpr int kMaxGpus = 64;

  constexpr GpuSet() = default;
  constexpr explicit GpuSet(uint64_t mask) : mask_(mask) {}
  static constexpr GpuSet FirstN(int n) {
    return GpuSet(n >= 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1));
  }
  static GpuSet Of(const std::vector<int>& indices) {
    GpuSet s;
    for (int i : indices) s.Add(i);
    return s;
  }

  constexpr uint64_t mask() const { return mask_; }
  constexpr int size() const { return std::popcount(mask_); }
  constexpr bool empty() const { return mask_ == 0; }
  constexpr bool contains(int i) const { return (mask_ >> i) & 1; }
  constexpr void Add(int i) { mask_ |= uint64_t{1} << i; }
  constexpr void Remove(int i) { mask_ &= ~(uint64_t{1} << i); }
  constexpr bool IsSubsetOf(GpuSet o) const { return (mask_ & ~o.mask_) == 0; }
  constexpr bool Intersects(GpuSet o) const { return (mask_ & o.mask_) != 0; }
  constexpr int Lowest() const { return mask_ ? std::countr_zero(mask_) : -1; }

  friend constexpr GpuSet operator|(GpuSet a, GpuSet b) { return GpuSet(a.mask_ | b.mask_); }
  friend constexpr GpuSet operator&(GpuSet a, GpuSet b) { return GpuSet(a.mask_ & b.mask_); }
  friend constexpr GpuSet operator-(GpuSet a, GpuSet b) { return GpuSet(a.mask_ & ~b.mask_); }
  friend constexpr bool operator==(GpuSet a, GpuSet b) = default;

  // Indices in increasing order.
  std::vector<int> Indices() const {
    std::vector<int> out;
    for (uint64_t m = mask_; m; m &= m - 1) out.push_back(std::countr_zero(m));
    return out;
  }
  // "0,1,2,3" - the format of the `topofit.io/gpu-ids` annotation. Empty set gives "".
  std::string ToString() const {
    std::string out;
    for (int i : Indices()) {
      if (!out.empty()) out += ',';
      out += std::to_string(i);
    }
    return out;
  }

 private:
  uint64_t mask_ = 0;
};

}  // namespace topofit
