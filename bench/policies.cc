// The policy registry: every policy the bench compares, in report order.
#include <sstream>

#include "bench/fgd_policy.h"
#include "bench/kube_policies.h"
#include "bench/paper_policies.h"
#include "bench/policy.h"
#include "bench/topofit_http_policy.h"
#include "bench/topofit_policy.h"

namespace topofit::bench {

const std::vector<PolicyInfo>& AllPolicies() {
  static const std::vector<PolicyInfo> all = {
      {"topofit", "topofit's extender pipeline (filter, prioritize, bind) on top of kube-scheduler's default scores",
       [](const PolicyOptions& o) {
         return o.via_http.empty() ? MakeTopofitPolicy(o) : MakeTopofitHttpPolicy(o);
       }},
      {"topofit-mostallocated",
       "topofit's extender pipeline on top of kube-scheduler's MostAllocated (cpu, memory, GPU) in-tree scores",
       [](const PolicyOptions& o) {
         PolicyOptions m = o;
         m.in_tree = "most";
         return m.via_http.empty() ? MakeTopofitPolicy(m) : MakeTopofitHttpPolicy(m);
       }},
      {"kube-default", "kube-scheduler default scoring (LeastAllocated + BalancedAllocation), device-plugin GPU set",
       [](const PolicyOptions&) { return MakeKubeDefaultPolicy(); }},
      {"kube-mostallocated", "kube-scheduler MostAllocated (cpu, memory, GPU) + BalancedAllocation, device-plugin GPU set",
       [](const PolicyOptions&) { return MakeKubeMostAllocatedPolicy(); }},
      {"random", "openb paper baseline: a random feasible node, device-plugin GPU set",
       [](const PolicyOptions&) { return MakeRandomPolicy(); }},
      {"bestfit", "openb paper baseline: tightest CPU+GPU fit, device-plugin GPU set",
       [](const PolicyOptions&) { return MakeBestFitPolicy(); }},
      {"dotprod", "openb paper baseline (Tetris): smallest free.request dot product, device-plugin GPU set",
       [](const PolicyOptions&) { return MakeDotProdPolicy(); }},
      {"gpu-packing", "openb paper baseline: fill used nodes first, device-plugin GPU set",
       [](const PolicyOptions&) { return MakeGpuPackingPolicy(); }},
      {"fgd", "openb paper's Fragmentation Gradient Descent on whole GPUs, online workload estimate, device-plugin GPU set",
       [](const PolicyOptions&) { return MakeFgdPolicy(); }},
      {"fgd-gpu-pods",
       "FGD for GPU pods only; pods without GPUs by kube-scheduler's default scores (LeastAllocated + BalancedAllocation)",
       [](const PolicyOptions&) { return MakeFgdPolicy(FgdScope::kGpuPodsLeastAllocated); }},
      {"fgd-gpu-pods-mostallocated",
       "FGD for GPU pods only; pods without GPUs by MostAllocated (cpu, memory, GPU) + BalancedAllocation",
       [](const PolicyOptions&) { return MakeFgdPolicy(FgdScope::kGpuPodsMostAllocated); }},
  };
  return all;
}

Result<std::vector<const PolicyInfo*>> SelectPolicies(const std::string& csv) {
  std::vector<const PolicyInfo*> out;
  if (csv.empty() || csv == "all") {
    for (const auto& p : AllPolicies()) out.push_back(&p);
    return out;
  }
  std::stringstream ss(csv);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (name.empty()) continue;
    const PolicyInfo* found = nullptr;
    for (const auto& p : AllPolicies())
      if (p.name == name) found = &p;
    if (!found) {
      std::string known;
      for (const auto& p : AllPolicies()) known += (known.empty() ? "" : ", ") + p.name;
      return Error{"unknown policy '" + name + "' (known: " + known + ")"};
    }
    out.push_back(found);
  }
  if (out.empty()) return Error{"no policy named"};
  return out;
}

}  // namespace topofit::bench
