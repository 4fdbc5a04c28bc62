#include "extender/groups/group_shapes.h"

#include <algorithm>
#include <cmath>

namespace topofit::groups {

GroupShapeEstimate::GroupShapeEstimate(GroupShapeOptions options) : options_(options) {
  snapshot_ = std::make_shared<GroupShapeSnapshot>();
}

bool GroupShapeEstimate::Observe(const GroupSpec& spec) {
  if (spec.gpus < 1 || spec.size < 1 || spec.level < 0) return false;
  std::lock_guard lock(mu_);
  const std::string key = spec.key();
  if (!recent_set_.insert(key).second) return false;
  recent_.push_back(key);
  if (recent_.size() > options_.dedup) {
    recent_set_.erase(recent_.front());
    recent_.pop_front();
  }
  const GroupShape shape{spec.size, spec.gpus, spec.level, 0};
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const GroupShape& e) {
    return e.members == shape.members && e.gpus == shape.gpus && e.level == shape.level;
  });
  if (it == entries_.end()) {
    if (entries_.size() < options_.max_shapes) {
      it = entries_.insert(entries_.end(), shape);
    } else {
      it = std::min_element(entries_.begin(), entries_.end(),
                            [](const GroupShape& a, const GroupShape& b) { return a.weight < b.weight; });
      *it = shape;
    }
  }
  it->weight += unit_;
  ++observed_;
  unit_ *= std::exp2(1.0 / std::max(1.0, options_.half_life));
  if (unit_ > 1e200) {  // Rescale; shares are unchanged.
    for (GroupShape& e : entries_) e.weight /= unit_;
    unit_ = 1.0;
  }
  PublishLocked();
  return true;
}

void GroupShapeEstimate::PublishLocked() {
  auto s = std::make_shared<GroupShapeSnapshot>();
  s->observed = observed_;
  double total = 0;
  for (const GroupShape& e : entries_) total += e.weight;
  for (const GroupShape& e : entries_) {
    if (total > 0 && e.weight > 0) s->shapes.push_back({e.members, e.gpus, e.level, e.weight / total});
  }
  std::stable_sort(s->shapes.begin(), s->shapes.end(),
                   [](const GroupShape& a, const GroupShape& b) { return a.weight > b.weight; });
  snapshot_ = std::move(s);
}

std::shared_ptr<const GroupShapeSnapshot> GroupShapeEstimate::Snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

}  // namespace topofit::groups
