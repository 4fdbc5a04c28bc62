#pragma once
// The pieces every running, decaying estimate shares (placement/workload_estimate.h over pods,
// groups/group_shapes.h over groups): a window of recently seen keys, a weight that grows so that
// older observations count less, and a bounded table of entries that evicts its lightest.
//
// RecentKeys(capacity): Insert(key) is true the first time a key is seen among the last `capacity`
//   inserted, false when it is among them (not an error: the caller counts the arrival once).
//   Capacity 0 remembers nothing, so every Insert is true.
// DecayingUnit(half_life): Weight() is the weight of the next observation; Advance(rescale), called
//   once the caller has stored it, makes the next 2^(1/half_life) times as heavy (half_life below 1
//   counts as 1), so an observation half_life ago weighs half as much as the newest. Past 1e200 the
//   unit returns to 1 and rescale(factor) must divide every stored weight by factor: shares unchanged.
// SlotFor(entries, max, matches, make, weight_of): the entry `matches` accepts; else make() appended
//   while fewer than `max` are held, else make() in place of the entry of least weight_of (the first of
//   equal weight). max 0 with an empty table is the caller's error (nothing to return): max >= 1.
// None of these locks; the estimates hold them under their own mutex.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace topofit {

class RecentKeys {
 public:
  explicit RecentKeys(size_t capacity) : capacity_(capacity) {}
  bool Insert(const std::string& key) {
    if (capacity_ == 0) return true;
    if (!set_.insert(key).second) return false;
    order_.push_back(key);
    if (order_.size() > capacity_) {
      set_.erase(order_.front());
      order_.pop_front();
    }
    return true;
  }
  bool Contains(const std::string& key) const { return capacity_ > 0 && set_.count(key) > 0; }
  void Clear() {
    order_.clear();
    set_.clear();
  }

 private:
  size_t capacity_;
  std::deque<std::string> order_;
  std::unordered_set<std::string> set_;
};

class DecayingUnit {
 public:
  explicit DecayingUnit(double half_life) : step_(std::exp2(1.0 / std::max(1.0, half_life))) {}
  double Weight() const { return unit_; }
  template <class Rescale>
  void Advance(Rescale&& rescale) {
    unit_ *= step_;
    if (unit_ > 1e200) {
      rescale(unit_);
      unit_ = 1.0;
    }
  }
  void Reset() { unit_ = 1.0; }

 private:
  double step_;
  double unit_ = 1.0;
};

template <class T, class Matches, class Make, class WeightOf>
typename std::vector<T>::iterator SlotFor(std::vector<T>& entries, size_t max, Matches&& matches, Make&& make,
                                          WeightOf&& weight_of) {
  auto it = std::find_if(entries.begin(), entries.end(), matches);
  if (it != entries.end()) return it;
  if (entries.size() < max) return entries.insert(entries.end(), make());
  it = std::min_element(entries.begin(), entries.end(),
                        [&](const T& a, const T& b) { return weight_of(a) < weight_of(b); });
  *it = make();
  return it;
}

}  // namespace topofit
