// Mirrors resource.PodRequests (without pod overhead, which never names extended resources).
#include "extender/k8s/effective_request.h"

#include <algorithm>

namespace topofit::k8s {
namespace {
void Add(EffectiveRequest& a, const ContainerRequest& c) {
  a.gpus += c.gpus;
  a.cpu_milli += c.cpu_milli;
  a.memory_bytes += c.memory_bytes;
}
void Max(EffectiveRequest& a, const EffectiveRequest& b) {
  a.gpus = std::max(a.gpus, b.gpus);
  a.cpu_milli = std::max(a.cpu_milli, b.cpu_milli);
  a.memory_bytes = std::max(a.memory_bytes, b.memory_bytes);
}
}  // namespace

EffectiveRequest ComputeEffectiveRequest(const std::vector<ContainerRequest>& containers,
                                         const std::vector<ContainerRequest>& init_containers) {
  EffectiveRequest sum;
  for (const auto& c : containers) Add(sum, c);
  EffectiveRequest sidecars;  // Restartable init containers started so far.
  EffectiveRequest init_peak;
  for (const auto& c : init_containers) {
    EffectiveRequest peak;
    if (c.restartable) {
      Add(sum, c);
      Add(sidecars, c);
      peak = sidecars;
    } else {
      peak = sidecars;
      Add(peak, c);
    }
    Max(init_peak, peak);
  }
  Max(sum, init_peak);
  return sum;
}

}  // namespace topofit::k8s
