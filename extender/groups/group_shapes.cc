#include "extender/groups/group_shapes.h"

#include <algorithm>

namespace topofit::groups {

GroupShapeEstimate::GroupShapeEstimate(GroupShapeOptions options)
    : options_(options), unit_(options.half_life), recent_(options.dedup) {
  snapshot_ = std::make_shared<GroupShapeSnapshot>();
}

bool GroupShapeEstimate::Observe(const GroupSpec& spec) {
  if (spec.gpus < 1 || spec.size < 1 || spec.level < 0) return false;
  std::lock_guard lock(mu_);
  if (!recent_.Insert(spec.key())) return false;
  const GroupShape shape{spec.size, spec.gpus, spec.level, 0};
  auto it = SlotFor(
      entries_, options_.max_shapes,
      [&](const GroupShape& e) { return e.members == shape.members && e.gpus == shape.gpus && e.level == shape.level; },
      [&] { return shape; }, [](const GroupShape& e) { return e.weight; });
  it->weight += unit_.Weight();
  ++observed_;
  unit_.Advance([&](double factor) {
    for (GroupShape& e : entries_) e.weight /= factor;
  });
  PublishLocked();
  any_.store(true, std::memory_order_release);
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
