#pragma once
// FakeKubelet: kubelet's device-plugin side as docs/kubelet-contracts.md §1, §2, §4 and §6 describe it,
// over real unix sockets, for the contract tests:
//   - serves v1beta1.Registration on <dir>/kubelet.sock; Register checks the version, dials
//     <dir>/<endpoint> synchronously (10 s), asks GetDevicePluginOptions and reads ListAndWatch into
//     its device health; the newest registration wins; a stream that ends marks every device
//     unhealthy at once;
//   - Admit(pod) admits one pod at a time (a mutex), through KubeletModel (testing/kubelet_model.h):
//     one container per call, GetPreferredAllocation (only if the plugin offers it) then Allocate,
//     preferred & available then random fill; its books' lock is released around each RPC, as
//     kubelet's is;
//   - serves v1.PodResourcesLister on `pod_resources_path`: Get answers NOT_FOUND for pods it has not
//     seen, List and GetAllocatableResources from its books; with LimitPodResources(qps, burst),
//     a token bucket over all three answers RESOURCE_EXHAUSTED past it, as kubelet's does;
//   - RefuseGets(n): the next n Gets are refused as kubelet's rate limit refuses them
//     (RESOURCE_EXHAUSTED "rejected by rate limit"); DelayGets(d): every Get answers after d;
//   - Restart() drops the plugin, removes every socket in <dir> (CleanupPluginDirectory) and serves
//     kubelet.sock again (a new file); its books survive (the checkpoint).

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "extender/node/plugin/plan.h"
#include "extender/node/plugin/testing/kubelet_model.h"

namespace topofit::node::testing {

class FakeKubelet {
 public:
  FakeKubelet(std::string dir, std::string pod_resources_path, uint64_t seed);
  ~FakeKubelet();

  Status Start();
  void Stop();
  void Restart();

  // Waits until a plugin registered and sent a list with at least one healthy device.
  bool WaitForDevices(std::chrono::milliseconds timeout);
  Status Admit(const NodePod& pod);
  void Remove(const std::string& uid);
  void LimitPodResources(double qps, int burst);
  int pod_resources_refused() const;  // RESOURCE_EXHAUSTED answers so far.

  std::map<KubeletModel::Key, DeviceList> Holdings() const;
  DeviceList Available() const;
  // The env the plugin's Allocate returned for (pod, container).
  std::map<std::string, std::string> Envs(const std::string& uid, const std::string& container) const;
  std::string endpoint() const;  // Of the current plugin registration.
  int registrations() const;
  int preferred_rpcs() const;
  int allocate_rpcs() const;
  void RefuseGets(int n);
  void DelayGets(std::chrono::milliseconds delay);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topofit::node::testing
