#pragma once
// Encoders for the replies kube-scheduler reads from an extender (k8s.io/kube-scheduler extender/v1),
// one per reply shape, beside the decoders of its requests (extender_args.h). Keys are upstream's
// PascalCase JSON tags; strings are escaped as Go's encoding/json does (json_writer.h).
//
// Contract: each returns the whole body, valid JSON, in a single string built with one reservation
// where the size is known (a filter over 5,000 names costs microseconds). Names and reasons are taken
// as given; nothing is validated. Never throws except std::bad_alloc.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/placement/pipeline.h"
#include "extender/protocol/extender_args.h"

namespace topofit::protocol {

// ExtenderFilterResult for a decoded filter request `args` whose nodes are `names` (its NodeNames, or
// the names of its Nodes): NodeNames lists the passed names when the request had NodeNames, Nodes
// echoes each kept Node's JSON byte for byte when it had Nodes (both when both came), FailedNodes and
// FailedAndUnresolvableNodes map names to reasons, Error is "".
std::string EncodeFilterResult(const ExtenderArgs& args, std::span<const std::string_view> names,
                               const placement::FilterOutcome& outcome);
// ExtenderFilterResult for a refused call: every list null, Error = `message`.
std::string EncodeFilterError(std::string_view message);

// HostPriorityList: [{"Host":name,"Score":0..10}] in the order of `scores` (clamped to 0..10).
std::string EncodeHostPriorityList(std::span<const std::string_view> names, std::span<const placement::NodeScore> scores);

// ExtenderBindingResult: {"Error": error} ("" on success).
std::string EncodeBindingResult(std::string_view error);

// ExtenderPreemptionResult in its meta form: {"NodeNameToMetaVictims":{node:{"Pods":[{"UID":uid}],
// "NumPDBViolations":n}}}, nodes in `victims` order; a node missing from `pdb_violations` has 0.
std::string EncodePreemptionResult(const std::map<std::string, std::vector<std::string>, std::less<>>& victims,
                                   const std::map<std::string, int64_t>& pdb_violations);

}  // namespace topofit::protocol
