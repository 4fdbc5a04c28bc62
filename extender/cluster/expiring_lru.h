#pragma once
// ExpiringLru<V>: values by string key, at most `capacity` of them (the least recently put goes first)
// and each gone `ttl` after it was put, so that what the scheduler gave up on does not accumulate.
// Put replaces a value of the same key and refreshes its age; Find does not refresh it. What leaves by
// age or capacity comes back from Put and Expire, for owners that index the values elsewhere; expiry
// happens in Put and Expire only (Find skips an expired value without removing it). Not thread-safe:
// its owner locks.

#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "extender/cluster/clock.h"

namespace topofit::cluster {

template <class V>
class ExpiringLru {
 public:
  ExpiringLru(size_t capacity, Duration ttl) : capacity_(capacity == 0 ? 1 : capacity), ttl_(ttl) {}

  std::vector<V> Put(std::string key, V value, TimePoint now) {
    Erase(key);
    order_.push_back(Entry{key, std::move(value), now});
    by_key_.emplace(std::move(key), std::prev(order_.end()));
    return Expire(now);
  }
  // Null when absent or expired; valid until the next non-const call.
  const V* Find(std::string_view key, TimePoint now) const {
    auto it = by_key_.find(std::string(key));
    if (it == by_key_.end() || now - it->second->put_at >= ttl_) return nullptr;
    return &it->second->value;
  }
  std::optional<V> Erase(std::string_view key) {
    auto it = by_key_.find(std::string(key));
    if (it == by_key_.end()) return std::nullopt;
    std::optional<V> out(std::move(it->second->value));
    order_.erase(it->second);
    by_key_.erase(it);
    return out;
  }
  std::vector<V> Expire(TimePoint now) {
    std::vector<V> out;
    while (!order_.empty() && (order_.size() > capacity_ || now - order_.front().put_at >= ttl_)) {
      by_key_.erase(order_.front().key);
      out.push_back(std::move(order_.front().value));
      order_.pop_front();
    }
    return out;
  }
  size_t size() const { return by_key_.size(); }

 private:
  struct Entry {
    std::string key;
    V value;
    TimePoint put_at;
  };
  const size_t capacity_;
  const Duration ttl_;
  std::list<Entry> order_;  // Oldest first.
  std::unordered_map<std::string, typename std::list<Entry>::iterator> by_key_;
};

}  // namespace topofit::cluster
