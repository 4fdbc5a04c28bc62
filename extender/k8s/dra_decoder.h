#pragma once
// Decoders from resource.k8s.io/v1 JSON (as the API server and kubectl write it) to the views of
// dra_objects.h: DeviceClass, ResourceSlice, ResourceClaim.
//
// Unknown fields are ignored (later API versions add fields). What is an error: a field of the wrong
// JSON type, an attribute value that is not one of int/bool/string/version, and sizes past the API
// server's own validation bounds (more than 128 devices in a slice, 32 attributes and capacities on
// a device, 32 allocation results, 32 class selectors, 32 requests and constraints of a claim,
// 256 reservedFor entries; a request's count outside 1..128) - bounded memory for
// hostile snapshots. Errors name the object and the field ("resourceslice n1-gpus: spec.devices[3]
// .attributes: more than 32"). Never throws.

#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "extender/k8s/dra_objects.h"
#include "extender/k8s/json_read.h"
#include "extender/k8s/objects.h"

namespace topofit::k8s {

Result<DeviceClassObject> DecodeDeviceClass(std::string_view json);
Result<ResourceSliceObject> DecodeResourceSlice(std::string_view json);
Result<ResourceClaimObject> DecodeResourceClaim(std::string_view json);

// For decoders of enclosing documents (snapshots): throw json::DecodeError / simdjson_error.
DeviceClassObject DecodeDeviceClassValue(json::dom::element v, const json::Path& path);
ResourceSliceObject DecodeResourceSliceValue(json::dom::element v, const json::Path& path);
ResourceClaimObject DecodeResourceClaimValue(json::dom::element v, const json::Path& path);

// For the pod decoder: spec.resourceClaims into pod.resource_claims (past 32 entries, claims_unread),
// and status.resourceClaimStatuses as name -> claim name (at most 32).
void DecodePodResourceClaims(json::dom::element v, const json::Path& path, PodObject& pod);
void DecodePodClaimStatuses(json::dom::element v, const json::Path& path, std::map<std::string, std::string>& out);

}  // namespace topofit::k8s
