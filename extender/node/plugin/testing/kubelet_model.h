#pragma once
// KubeletModel: kubelet's device manager for one extended resource, as docs/kubelet-contracts.md §2
// describes and pkg/kubelet/cm/devicemanager/manager.go (v1.36.3: Allocate, devicesToAllocate) does,
// with Topology Manager policy none - the oracle of the property test and the core of the fake
// kubelet (fake_kubelet.h).
//
// Admit(pod) walks the pod's GPU containers in order (init first). Per container of request k:
//   - devices already recorded for it: nothing to do;
//   - take from the pod's reusable devices (a finished regular init container's) first, in random
//     order; done when they cover k (no plugin call);
//   - available = healthy - allocated (every container's devices); fewer than still needed fails
//     admission ("requested number of devices unavailable");
//   - GetPreferredAllocation(available + taken, must_include = taken, size = k) through `preferred`
//     (nullopt: the plugin returned an error, which fails admission); take preferred & available;
//   - fill any shortfall from available in random order (Go map iteration);
//   - Allocate(devices) through `allocate` (false fails admission).
// A regular init container's devices become the pod's reusable devices; an app container's and a
// sidecar's are taken out of them. Remove(uid) frees a pod's devices (terminal or deleted).
// Not thread-safe: kubelet admits serially, and so do the callers.

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "extender/node/plugin/matcher.h"
#include "extender/node/plugin/plan.h"

namespace topofit::node::testing {

class KubeletModel {
 public:
  using PreferredFn = std::function<std::optional<DeviceList>(const PreferredRequest&)>;
  using AllocateFn = std::function<bool(const DeviceList&)>;
  using Key = std::pair<std::string, std::string>;  // pod uid, container

  explicit KubeletModel(uint64_t seed) : rng_(seed) {}

  void SetDevices(std::map<std::string, bool> healthy) { healthy_ = std::move(healthy); }

  // The pod becomes known (kubelet's pod manager adds it just before admitting it).
  void Know(const NodePod& pod) { known_[pod.key()] = pod.uid; }

  Status Admit(const NodePod& pod, const PreferredFn& preferred, const AllocateFn& allocate) {
    Know(pod);
    std::set<std::string> reusable;
    for (const auto& c : pod.containers) {
      const Key key{pod.uid, c.name};
      if (holdings_.count(key)) continue;
      DeviceList taken;
      std::vector<std::string> reuse(reusable.begin(), reusable.end());
      std::shuffle(reuse.begin(), reuse.end(), rng_);
      for (const auto& d : reuse) {
        if (static_cast<int64_t>(taken.size()) == c.gpus) break;
        taken.push_back(d);
      }
      if (static_cast<int64_t>(taken.size()) < c.gpus) {
        DeviceList available = Available();
        const int64_t needed = c.gpus - static_cast<int64_t>(taken.size());
        if (static_cast<int64_t>(available.size()) < needed) {
          return Error{"requested number of devices unavailable for " + c.name};
        }
        PreferredRequest req{available, taken, static_cast<int>(c.gpus)};
        for (const auto& t : taken) req.available.push_back(t);
        std::optional<DeviceList> pref = preferred(req);
        if (!pref) return Error{"GetPreferredAllocation failed for " + c.name};
        ++preferred_calls_;
        for (const auto& d : *pref) {
          if (static_cast<int64_t>(taken.size()) == c.gpus) break;
          if (std::find(available.begin(), available.end(), d) != available.end() &&
              std::find(taken.begin(), taken.end(), d) == taken.end()) {
            taken.push_back(d);
          }
        }
        std::shuffle(available.begin(), available.end(), rng_);
        for (const auto& d : available) {
          if (static_cast<int64_t>(taken.size()) == c.gpus) break;
          if (std::find(taken.begin(), taken.end(), d) == taken.end()) taken.push_back(d), ++random_fills_;
        }
      }
      std::sort(taken.begin(), taken.end());
      if (!allocate(taken)) return Error{"Allocate failed for " + c.name};
      holdings_[key] = taken;
      if (c.init && !c.restartable) {
        reusable.insert(taken.begin(), taken.end());
      } else {
        for (const auto& d : taken) reusable.erase(d);
      }
    }
    return Status::Ok();
  }

  void Remove(const std::string& uid) {
    for (auto it = holdings_.begin(); it != holdings_.end();) {
      it = it->first.first == uid ? holdings_.erase(it) : std::next(it);
    }
    for (auto it = known_.begin(); it != known_.end();) {
      it = it->second == uid ? known_.erase(it) : std::next(it);
    }
  }

  // healthy - every device any container holds, sorted.
  DeviceList Available() const {
    std::set<std::string> used;
    for (const auto& [key, devices] : holdings_) used.insert(devices.begin(), devices.end());
    DeviceList out;
    for (const auto& [id, ok] : healthy_) {
      if (ok && !used.count(id)) out.push_back(id);
    }
    return out;
  }

  // What PodResources Get would say of (pod, container): unknown pod, or whether it has devices.
  KubeletView View(const NodePod& pod, const std::string& container) const {
    auto it = known_.find(pod.key());
    if (it == known_.end()) return KubeletView::kNotFound;
    auto h = holdings_.find({it->second, container});
    return h == holdings_.end() ? KubeletView::kAdmitting : KubeletView::kHasDevices;
  }

  const std::map<Key, DeviceList>& holdings() const { return holdings_; }
  DeviceList devices() const {
    DeviceList out;
    for (const auto& [id, ok] : healthy_) out.push_back(id);
    return out;
  }
  const std::map<std::string, std::string>& known() const { return known_; }  // namespace/name -> uid
  int random_fills() const { return random_fills_; }
  int preferred_calls() const { return preferred_calls_; }

 private:
  std::mt19937_64 rng_;
  std::map<std::string, bool> healthy_;
  std::map<Key, DeviceList> holdings_;
  std::map<std::string, std::string> known_;
  int random_fills_ = 0;
  int preferred_calls_ = 0;
};

}  // namespace topofit::node::testing
