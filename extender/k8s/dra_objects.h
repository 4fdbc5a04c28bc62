#pragma once
// Plain decoded views of the resource.k8s.io/v1 objects through which DRA serves GPUs: DeviceClass,
// ResourceSlice and ResourceClaim - only the fields topofit reads (see docs/dra.md).
//
// Produced by dra_decoder.h (API JSON, snapshots) and consumed by extender/cluster/dra_inventory.h.
// Attribute names are stored fully qualified: an attribute a driver publishes without a domain
// ("uuid") is "<driver>/uuid", as CEL's device.attributes["<driver>"] sees it. Attribute values keep
// their text: strings as written, ints in decimal, bools "true"/"false", versions as written.
// Sizes are the API server's own validation bounds (resource.k8s.io/v1), enforced by the decoder.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "extender/k8s/objects.h"

namespace topofit::k8s {

inline constexpr size_t kMaxDevicesPerSlice = 128;           // ResourceSliceMaxDevices
inline constexpr size_t kMaxAttributesPerDevice = 32;        // ResourceSliceMaxAttributesAndCapacitiesPerDevice
inline constexpr size_t kMaxAllocationResults = 32;          // AllocationResultsMaxSize
inline constexpr size_t kMaxClassSelectors = 32;             // DeviceSelectorsMaxSize
inline constexpr size_t kMaxReservedFor = 256;               // ResourceClaimReservedForMaxSize
// The claim kube-scheduler writes for a pod's DRA-backed extended resources carries this annotation.
inline constexpr const char* kExtendedResourceClaimAnnotation = "resource.kubernetes.io/extended-resource-claim";
// A pod's request for this prefix + a DeviceClass's name asks devices of that class (KEP-5004's
// implicit extended resource name; every class has one).
inline constexpr const char* kDeviceClassResourcePrefix = "deviceclass.resource.kubernetes.io/";
inline constexpr size_t kMaxDeviceRequests = 32;             // DeviceRequestsMaxSize, DeviceConstraintsMaxSize
inline constexpr const char* kStandardAttributeDomain = "resource.kubernetes.io";

struct DeviceClassObject {
  ObjectMeta meta;
  std::string creation_timestamp;          // RFC 3339, as written; "" when absent.
  std::string extended_resource_name;      // spec.extendedResourceName; "" when not set.
  std::vector<std::string> cel_selectors;  // spec.selectors[].cel.expression, in order.
};

struct DraDevice {
  std::string name;
  std::map<std::string, std::string> attributes;  // Qualified name -> value text.
  bool tainted = false;  // A NoSchedule or NoExecute taint: the allocator skips it for untolerating claims.
};

struct ResourceSliceObject {
  ObjectMeta meta;
  std::string driver;
  std::string pool;
  int64_t generation = 0;
  int64_t slice_count = 0;      // spec.pool.resourceSliceCount
  std::string node_name;        // spec.nodeName; "" for slices of many nodes (allNodes, nodeSelector).
  bool binding_conditions = false;  // Some device has bindingConditions: the allocator tries the pool last.
  std::vector<DraDevice> devices;
};

struct DeviceResult {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  friend bool operator==(const DeviceResult&, const DeviceResult&) = default;
};

struct PodReference {
  std::string name;
  std::string uid;
};

// spec.devices.requests[] of a claim: an `exactly` request as read; a firstAvailable one (a list of
// alternatives) keeps only its name, first_available set.
struct DeviceRequest {
  std::string name;
  std::string device_class;                // exactly.deviceClassName
  bool all = false;                        // exactly.allocationMode All (else ExactCount).
  int64_t count = 1;                       // exactly.count (ExactCount), 1 when absent.
  std::vector<std::string> cel_selectors;  // exactly.selectors[].cel.expression, in order.
  bool first_available = false;
  bool tolerates = false;                  // exactly.tolerations is not empty.
};

// spec.devices.constraints[]: matchAttribute over `requests` (empty: all of the claim's requests);
// `other` when it constrains something else (distinctAttribute, ...).
struct DeviceConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;  // Qualified as written ("resource.kubernetes.io/pcieRoot").
  bool other = false;
};

struct ResourceClaimObject {
  ObjectMeta meta;
  std::vector<DeviceRequest> requests;       // spec.devices.requests, in order (at most 32).
  std::vector<DeviceConstraint> constraints;  // spec.devices.constraints (at most 32).
  bool extended_resource = false;        // The annotation above is "true".
  PodReference owner_pod;                // The controlling Pod owner reference; empty when none.
  std::vector<PodReference> reserved_for;  // status.reservedFor entries of resource "pods".
  bool allocated = false;                // status.allocation is set.
  std::vector<DeviceResult> results;     // status.allocation.devices.results, in order.
};

}  // namespace topofit::k8s
