#pragma once
// Decoders from Kubernetes JSON (camelCase, as the API server, kubectl and the scheduler write it)
// to the plain views of objects.h and pod_group.h.
//
// Quantities may be JSON strings ("4", "500m", "32Gi") or numbers. nvidia.com/gpu must be a whole,
// non-negative count, and when a container gives both, requests must equal limits; a missing request
// takes the limit, as API defaulting does. Errors name the object and the field, e.g.
// "pod default/train: spec.containers[0].resources.limits[nvidia.com/gpu]: invalid quantity '0.5':
// must be a whole number". Never throws.
// A pod's group reference (pod_group.h) is read from spec.schedulingGroup.podGroupName and the label
// scheduling.x-k8s.io/pod-group. DecodePodGroup reads a PodGroup of either API: its apiVersion decides
// which when present; absent (the items of a List the API server sends), `api` does. Errors: an
// apiVersion of neither API, a minCount/minMember outside 0..2147483647, a Workload PodGroup that states
// neither basic nor gang ("podgroup ml/train: spec.schedulingPolicy: states neither basic nor gang").
// Not an error: a coscheduling PodGroup without minMember (0: extender/groups/group_spec.h refuses it
// as a group, with its name).

#include <string>
#include <string_view>

#include "base/status.h"
#include "extender/k8s/json_read.h"
#include "extender/k8s/objects.h"

namespace topofit::k8s {

Result<NodeObject> DecodeNode(std::string_view json);
Result<PodObject> DecodePod(std::string_view json);
Result<PodGroupObject> DecodePodGroup(std::string_view json, PodGroupObject::Api api);

// For decoders of enclosing documents (request bodies, Lists): read one object at `v`, throwing
// json::DecodeError / simdjson_error; the caller's boundary catches.
NodeObject DecodeNodeValue(json::dom::element v, const json::Path& path);
// metadata of any object into `meta` (name, namespace, uid, resourceVersion, labels, annotations, deleting).
void DecodeMetaValue(json::dom::element v, const json::Path& path, ObjectMeta& meta);
// "<kind> <namespace>/<name>" (or less, as much as is known), for error messages.
std::string DescribeObject(std::string_view kind, const ObjectMeta& meta);
// Runs `body`, prefixing a DecodeError it throws with the object (DescribeObject; `meta` as filled so far).
template <typename F>
void WithObjectContext(std::string_view kind, const ObjectMeta& meta, F&& body) {
  try {
    body();
  } catch (json::DecodeError& e) {
    e.message = DescribeObject(kind, meta) + ": " + e.message;
    throw;
  }
}
PodObject DecodePodValue(json::dom::element v, const json::Path& path);
PodGroupObject DecodePodGroupValue(json::dom::element v, const json::Path& path, PodGroupObject::Api api);

// Runs `body` and turns anything it throws into an Error. The boundary every public decoder uses.
template <typename T, typename F>
Result<T> CatchDecode(F&& body) {
  try {
    return body();
  } catch (const json::DecodeError& e) {
    return Error{e.message};
  } catch (const simdjson::simdjson_error& e) {
    return Error{std::string("invalid JSON: ") + simdjson::error_message(e.error())};
  } catch (const std::bad_alloc&) {
    return Error{"out of memory while decoding"};
  }
}

// One document's text decoded by `decode(root, Path{})` (a Decode*Value), inside CatchDecode.
template <typename T, typename F>
Result<T> DecodeText(std::string_view text, F&& decode) {
  simdjson::padded_string padded(text);
  json::dom::parser parser;
  return CatchDecode<T>([&]() -> Result<T> { return decode(json::Parse(parser, padded), json::Path{}); });
}

}  // namespace topofit::k8s
