#include "extender/placement/workload_estimate.h"

#include "extender/cluster/node_state.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace topofit::placement {

namespace {

// Half-octave bucket of a positive quantity; 0 and below share bucket INT32_MIN.
int Bucket(int64_t v) { return v <= 0 ? INT32_MIN : int(std::floor(2.0 * std::log2(double(v)))); }

}  // namespace

WorkloadEstimate::WorkloadEstimate(WorkloadOptions options)
    : options_(options), unit_(options.half_life), recent_(options.dedup) {
  snapshot_ = std::make_shared<WorkloadSnapshot>(WorkloadSnapshot{{}, 0, options_.half_life});
}

void WorkloadEstimate::Reset() {
  std::lock_guard lock(mu_);
  entries_.clear();
  unit_.Reset();
  observed_ = 0;
  recent_.Clear();
  PublishLocked();
}

void WorkloadEstimate::AddLocked(const cluster::PodRequest& pod, std::vector<Entry>& entries, DecayingUnit& unit,
                                 uint64_t& observed) const {
  std::vector<std::string> products = pod.gpu_products;
  std::sort(products.begin(), products.end());
  products.erase(std::unique(products.begin(), products.end()), products.end());
  const int cb = Bucket(pod.cpu_milli), mb = Bucket(pod.memory_bytes);
  auto make = [&] {
    Entry e;
    e.shape.gpus = pod.gpus;
    for (const auto& p : products) e.shape.product_ids.push_back(cluster::GpuProductId(p));
    e.shape.products = products;
    e.shape.policy = pod.intent.policy;
    e.cpu_bucket = cb;
    e.mem_bucket = mb;
    return e;
  };
  auto it = SlotFor(
      entries, options_.max_shapes,
      [&](const Entry& e) {
        return e.shape.gpus == pod.gpus && e.cpu_bucket == cb && e.mem_bucket == mb &&
               e.shape.policy == pod.intent.policy && e.shape.products == products;
      },
      make, [](const Entry& e) { return e.shape.weight; });
  const double w = unit.Weight();
  it->shape.weight += w;
  ++observed;
  {  // The shape's CPU and memory: the weighted mean of its pods.
    const double total = it->shape.weight;
    auto mean = [&](int64_t old_mean, int64_t v) {
      return int64_t(std::llround(double(old_mean) + (double(v) - double(old_mean)) * (w / total)));
    };
    it->shape.cpu_milli = mean(it->shape.cpu_milli, pod.cpu_milli);
    it->shape.memory_bytes = mean(it->shape.memory_bytes, pod.memory_bytes);
  }
  unit.Advance([&](double factor) {
    for (Entry& e : entries) e.shape.weight /= factor;
  });
}

std::shared_ptr<const WorkloadSnapshot> WorkloadEstimate::SnapshotWith(const cluster::PodRequest& pod) const {
  if (pod.gpus <= 0 || !pod.error.empty()) return Snapshot();
  std::lock_guard lock(mu_);
  const std::string id = pod.uid.empty() ? pod.key() : pod.uid;
  if (id != "/" && recent_.Contains(id)) return snapshot_;
  std::vector<Entry> entries = entries_;
  DecayingUnit unit = unit_;
  uint64_t observed = observed_;
  AddLocked(pod, entries, unit, observed);
  return Publish(entries, observed);
}

bool WorkloadEstimate::Observe(const cluster::PodRequest& pod) {
  if (pod.gpus <= 0 || !pod.error.empty()) return false;
  std::lock_guard lock(mu_);
  const std::string id = pod.uid.empty() ? pod.key() : pod.uid;
  if (id != "/" && !recent_.Insert(id)) return false;
  AddLocked(pod, entries_, unit_, observed_);
  PublishLocked();
  return true;
}

void WorkloadEstimate::PublishLocked() { std::atomic_store(&snapshot_, Publish(entries_, observed_)); }

std::shared_ptr<const WorkloadSnapshot> WorkloadEstimate::Publish(const std::vector<Entry>& entries_,
                                                                  uint64_t observed_) const {
  auto snap = std::make_shared<WorkloadSnapshot>();
  snap->observed = observed_;
  snap->half_life = options_.half_life;
  double sum = 0;
  for (const Entry& e : entries_) sum += e.shape.weight;
  for (const Entry& e : entries_) {
    PodShape s = e.shape;
    s.weight = sum > 0 ? e.shape.weight / sum : 0;
    snap->shapes.push_back(std::move(s));
  }
  std::stable_sort(snap->shapes.begin(), snap->shapes.end(),
                   [](const PodShape& a, const PodShape& b) { return a.weight > b.weight; });
  return snap;
}

std::string DescribeWorkload(const WorkloadSnapshot& snap, size_t top) {
  if (snap.shapes.empty()) return "no GPU pod seen yet (each pod is then its own workload)";
  std::string out = fmt::format("{} GPU pod{} seen (half-life {:g}):", snap.observed, snap.observed == 1 ? "" : "s",
                                snap.half_life);
  for (size_t i = 0; i < snap.shapes.size() && i < top; ++i) {
    const PodShape& s = snap.shapes[i];
    out += fmt::format("{} {} GPU{}", i ? "," : "", s.gpus, s.gpus == 1 ? "" : "s");
    if (!s.products.empty()) out += " on " + fmt::format("{}", fmt::join(s.products, "|"));
    if (s.cpu_milli >= 16000) out += fmt::format(" {} cores", s.cpu_milli / 1000);
    if (s.memory_bytes >= (int64_t(128) << 30)) out += fmt::format(" {} GiB", s.memory_bytes >> 30);
    if (s.policy != cluster::TopologyPolicy::kBestEffort) out += fmt::format(" {}", ToString(s.policy));
    out += fmt::format(" {:.0f}%", 100 * s.weight);
  }
  if (snap.shapes.size() > top) out += fmt::format(" (+{} more shapes)", snap.shapes.size() - top);
  return out;
}

std::shared_ptr<const WorkloadSnapshot> WorkloadEstimate::Snapshot() const { return std::atomic_load(&snapshot_); }

}  // namespace topofit::placement
