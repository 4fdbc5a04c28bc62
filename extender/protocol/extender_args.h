#pragma once
// Decoders for the bodies kube-scheduler POSTs to an extender (k8s.io/kube-scheduler extender/v1):
// ExtenderArgs (filter, prioritize), ExtenderBindingArgs (bind), ExtenderPreemptionArgs (preempt).
//
// The scheduler sends PascalCase keys; keys of these envelopes are matched case-insensitively (its
// own tests lower-case whole documents). Unknown keys are ignored; `null` is the same as absent.
// In full-node mode each Node's JSON text is kept as sent (a view into the body), so a filter reply
// can echo the kept Nodes byte for byte; only their names are decoded unless the caller asks for
// more. Never throws.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "extender/k8s/objects.h"

namespace topofit::protocol {

// One Node of a full-node request.
struct NodeItem {
  std::string name;                  // metadata.name
  std::string_view json;             // The Node's JSON as sent: a view into the request body.
  std::optional<k8s::NodeObject> object;  // Decoded only where ExtenderArgsOptions::decode_node said so.
};

struct ExtenderArgs {
  k8s::PodObject pod;
  // Node-cache mode (nodeCacheCapable: true): the names, viewing name_storage. nullopt when
  // NodeNames is null or absent.
  std::optional<std::vector<std::string_view>> node_names;
  std::vector<char> name_storage;  // One block for all names (a vector keeps its buffer on move).
  // Full-node mode: the Nodes, in request order. nullopt when Nodes is null or absent. The views
  // point into the body passed to DecodeExtenderArgs (or into json_storage), which must outlive them.
  std::optional<std::vector<NodeItem>> nodes;
  std::deque<std::string> json_storage;  // Re-printed Nodes, when the raw text could not be located.
};

// Readable bytes after a body that DecodeExtenderArgs may parse in place (simdjson reads up to 64
// bytes past the end of its input); any other body is copied into a padded buffer first.
inline constexpr size_t kJsonPadding = 64;

struct ExtenderArgsOptions {
  // Full-node mode: decode the whole Node (into NodeItem::object) when this returns true for its
  // name, e.g. for nodes the model does not know yet. Unset: names only.
  std::function<bool(std::string_view name)> decode_node;
  // The body is followed by at least kJsonPadding readable bytes: parsed where it lies, saving a
  // copy (3.4 MB for 1,000 Nodes).
  bool padded = false;
};

struct BindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};

struct Victims {
  std::vector<k8s::PodObject> pods;    // NodeNameToVictims: full pods.
  std::vector<std::string> uids;  // NodeNameToMetaVictims: the UIDs (also filled from `pods`).
  int64_t num_pdb_violations = 0;
};

struct PreemptionArgs {
  k8s::PodObject pod;
  std::map<std::string, Victims> node_to_victims;       // From NodeNameToVictims.
  std::map<std::string, Victims> node_to_meta_victims;  // From NodeNameToMetaVictims.
};

// Pod is required (an Error says so when missing or null).
Result<ExtenderArgs> DecodeExtenderArgs(std::string_view body, const ExtenderArgsOptions& options = {});
// PodName and Node are required.
Result<BindingArgs> DecodeBindingArgs(std::string_view body);
// Pod is required.
Result<PreemptionArgs> DecodePreemptionArgs(std::string_view body);

}  // namespace topofit::protocol
