#pragma once
// Scores: prioritize's score of each named node, by name - for the placement tests.

#include <map>
#include <string>
#include <vector>

#include "extender/cluster/pod_intent.h"
#include "extender/placement/pipeline.h"

namespace topofit::placement::testing {

// Prioritize's score of each named node, by name.
inline std::map<std::string, int> Scores(const Pipeline& p, const cluster::PodRequest& pod, const std::vector<std::string>& names) {
  std::map<std::string, int> out;
  for (const NodeScore& s : p.Prioritize(pod, names)) out[names[s.index]] = s.score;
  return out;
}

}  // namespace topofit::placement::testing
