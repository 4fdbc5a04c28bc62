#pragma once
// Decoders for the bodies kube-scheduler POSTs to an extender (k8s.io/kube-scheduler extender/v1):
// ExtenderArgs (filter, prioritize), ExtenderBindingArgs (bind), ExtenderPreemptionArgs (preempt).
//
// The scheduler sends PascalCase keys; keys of these envelopes are matched case-insensitively (its
// own tests lower-case whole documents). Unknown keys are ignored; `null` is the same as absent.
// In full-node mode the raw JSON of every Node is kept (minified from the parsed document, not
// re-encoded from our views), so a filter reply can echo the kept Nodes with every field the
// scheduler sent. Never throws.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/k8s/objects.h"
#include "topology/result.h"

namespace topofit::k8s {

struct ExtenderArgs {
  PodObject pod;
  // Node-cache mode (nodeCacheCapable: true): the names. nullopt when NodeNames is null or absent.
  std::optional<std::vector<std::string>> node_names;
  // Full-node mode: the decoded Nodes and, index for index, each one's JSON. nullopt when Nodes is
  // null or absent.
  std::optional<std::vector<NodeObject>> nodes;
  std::vector<std::string> nodes_json;
};

struct BindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};

struct Victims {
  std::vector<PodObject> pods;    // NodeNameToVictims: full pods.
  std::vector<std::string> uids;  // NodeNameToMetaVictims: the UIDs (also filled from `pods`).
  int64_t num_pdb_violations = 0;
};

struct PreemptionArgs {
  PodObject pod;
  std::map<std::string, Victims> node_to_victims;       // From NodeNameToVictims.
  std::map<std::string, Victims> node_to_meta_victims;  // From NodeNameToMetaVictims.
};

// Pod is required (an Error says so when missing or null).
Result<ExtenderArgs> DecodeExtenderArgs(std::string_view body);
// PodName and Node are required.
Result<BindingArgs> DecodeBindingArgs(std::string_view body);
// Pod is required.
Result<PreemptionArgs> DecodePreemptionArgs(std::string_view body);

}  // namespace topofit::k8s
