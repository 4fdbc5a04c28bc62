#include "extender/k8s/dra_decoder.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "extender/k8s/object_decoder.h"

namespace topofit::k8s {

TEST_CASE("decode DeviceClass: extended resource name, CEL selectors, creation time") {
  auto c = DecodeDeviceClass(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",
    "metadata":{"name":"gpu.nvidia.com","creationTimestamp":"2026-01-02T03:04:05Z"},
    "spec":{"extendedResourceName":"nvidia.com/gpu","selectors":[
      {"cel":{"expression":"device.driver == 'gpu.nvidia.com'"}},
      {"cel":{"expression":"device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}})");
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error()));
  CHECK(c->meta.name == "gpu.nvidia.com");
  CHECK(c->creation_timestamp == "2026-01-02T03:04:05Z");
  CHECK(c->extended_resource_name == "nvidia.com/gpu");
  REQUIRE(c->cel_selectors.size() == 2);
  CHECK(c->cel_selectors[1] == "device.attributes['gpu.nvidia.com'].type == 'gpu'");
}

TEST_CASE("decode ResourceSlice: devices with qualified attributes, taints, pool") {
  auto s = DecodeResourceSlice(R"({"kind":"ResourceSlice","metadata":{"name":"n1-gpu"},
    "spec":{"nodeName":"n1","pool":{"name":"n1","generation":3,"resourceSliceCount":1},
      "devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-a"},"index":{"int":0},
                  "resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"},"mig":{"bool":false},
                  "driverVersion":{"version":"570.1.0"}},"capacity":{"memory":{"value":"80Gi"}}},
                 {"name":"gpu-1","taints":[{"key":"k","effect":"NoSchedule"}]}],
      "driver":"gpu.nvidia.com"}})");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error()));
  CHECK(s->driver == "gpu.nvidia.com");
  CHECK(s->pool == "n1");
  CHECK(s->generation == 3);
  CHECK(s->slice_count == 1);
  CHECK(s->node_name == "n1");
  REQUIRE(s->devices.size() == 2);
  const auto& a = s->devices[0].attributes;
  CHECK(a.at("gpu.nvidia.com/uuid") == "GPU-a");  // the driver's domain, though the driver came last
  CHECK(a.at("gpu.nvidia.com/index") == "0");
  CHECK(a.at("gpu.nvidia.com/mig") == "false");
  CHECK(a.at("gpu.nvidia.com/driverVersion") == "570.1.0");
  CHECK(a.at("resource.kubernetes.io/pcieRoot") == "pci0000:00");
  CHECK_FALSE(s->devices[0].tainted);
  CHECK(s->devices[1].tainted);
}

TEST_CASE("decode ResourceClaim: allocation results, owner pod, reservedFor") {
  auto c = DecodeResourceClaim(R"({"kind":"ResourceClaim","metadata":{"name":"p-extended-resources-x",
    "namespace":"ns","uid":"c1","annotations":{"resource.kubernetes.io/extended-resource-claim":"true"},
    "ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"pu","controller":true}]},
    "status":{"allocation":{"devices":{"results":[
        {"request":"container-0-request-0","driver":"gpu.nvidia.com","pool":"n1","device":"gpu-2"}]}},
      "reservedFor":[{"resource":"pods","name":"p","uid":"pu"},{"resource":"other","name":"x","uid":"y"}]}})");
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error()));
  CHECK(c->extended_resource);
  CHECK(c->owner_pod.uid == "pu");
  CHECK(c->owner_pod.name == "p");
  CHECK(c->allocated);
  REQUIRE(c->results.size() == 1);
  CHECK(c->results[0] == DeviceResult{"container-0-request-0", "gpu.nvidia.com", "n1", "gpu-2"});
  REQUIRE(c->reserved_for.size() == 1);
  CHECK(c->reserved_for[0].uid == "pu");
  auto pending = DecodeResourceClaim(R"({"metadata":{"name":"c"},"status":{"allocation":null}})");
  REQUIRE(pending.ok());
  CHECK_FALSE(pending->allocated);
}

TEST_CASE("decode DRA objects: errors are bounded and name the object and field") {
  std::string devices;
  for (int i = 0; i < 129; ++i) devices += std::string(i ? "," : "") + R"({"name":"d)" + std::to_string(i) + R"("})";
  auto big = DecodeResourceSlice(R"({"metadata":{"name":"s"},"spec":{"devices":[)" + devices + "]}}");
  REQUIRE_FALSE(big.ok());
  CHECK(big.error() == "resourceslice s: spec.devices: more than 128");
  auto bad = DecodeResourceSlice(R"({"metadata":{"name":"s"},"spec":{"devices":[{"name":"d","attributes":{"x":{"float":1.5}}}]}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("resourceslice s: spec.devices[0].attributes.x.float: expected one of") == 0);
  auto wrong = DecodeDeviceClass(R"({"metadata":{"name":"c"},"spec":{"selectors":{}}})");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().find("deviceclass c: spec.selectors") == 0);
  CHECK_FALSE(DecodeResourceClaim("[").ok());
  auto count = DecodeResourceClaim(R"({"metadata":{"name":"c"},"spec":{"devices":{"requests":[{"name":"g",
    "exactly":{"deviceClassName":"gpu","count":0}}]}}})");
  REQUIRE_FALSE(count.ok());
  CHECK(count.error() == "resourceclaim c: spec.devices.requests[0].exactly.count: out of range 1..128");
}

TEST_CASE("decode ResourceClaim spec: requests (exactly, All, selectors, firstAvailable), constraints") {
  auto c = DecodeResourceClaim(R"({"metadata":{"name":"c","namespace":"ml","uid":"u"},"spec":{"devices":{
    "requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":4,
                 "selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].productName == 'H100'"}}]}},
                {"name":"all","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"All",
                 "tolerations":[{"operator":"Exists"}]}},
                {"name":"alt","firstAvailable":[{"name":"a","deviceClassName":"gpu.nvidia.com"}]}],
    "constraints":[{"requests":["gpus"],"matchAttribute":"resource.kubernetes.io/pcieRoot"},
                   {"distinctAttribute":"gpu.nvidia.com/uuid"}]}}})");
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error()));
  REQUIRE(c->requests.size() == 3);
  CHECK(c->requests[0].name == "gpus");
  CHECK(c->requests[0].device_class == "gpu.nvidia.com");
  CHECK(c->requests[0].count == 4);
  CHECK_FALSE(c->requests[0].all);
  CHECK(c->requests[0].cel_selectors == std::vector<std::string>{"device.attributes['gpu.nvidia.com'].productName == 'H100'"});
  CHECK(c->requests[1].all);
  CHECK(c->requests[1].count == 1);
  CHECK(c->requests[1].tolerates);
  CHECK(c->requests[2].first_available);
  REQUIRE(c->constraints.size() == 2);
  CHECK(c->constraints[0].requests == std::vector<std::string>{"gpus"});
  CHECK(c->constraints[0].match_attribute == "resource.kubernetes.io/pcieRoot");
  CHECK_FALSE(c->constraints[0].other);
  CHECK(c->constraints[1].other);
  CHECK_FALSE(c->allocated);
}

TEST_CASE("decode Pod: spec.resourceClaims, the claims made from templates, the implicit class resource") {
  auto p = DecodePod(R"({"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{
    "containers":[{"name":"a","resources":{"limits":{"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"2"},
                   "claims":[{"name":"own"}]}},
                  {"name":"b","resources":{"requests":{"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"1"}}}],
    "initContainers":[{"name":"i","resources":{"limits":{"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"4"}}}],
    "resourceClaims":[{"name":"own","resourceClaimName":"mine"},{"name":"t","resourceClaimTemplateName":"tpl"},
                      {"name":"later","resourceClaimTemplateName":"tpl"}]},
    "status":{"resourceClaimStatuses":[{"name":"t","resourceClaimName":"p-t-abcde"}]}})");
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error()));
  REQUIRE(p->resource_claims.size() == 3);
  CHECK(p->resource_claims[0] == PodClaimRef{"own", "mine", false});
  CHECK(p->resource_claims[1] == PodClaimRef{"t", "p-t-abcde", true});
  CHECK(p->resource_claims[2] == PodClaimRef{"later", "", true});
  CHECK_FALSE(p->claims_unread);
  CHECK(p->gpus == 0);
  CHECK(p->class_resource == "gpu.nvidia.com");
  CHECK(p->class_resource_count == 4);  // max(2 + 1, the init container's 4)
  auto bad = DecodePod(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a","resources":{"limits":
    {"deviceclass.resource.kubernetes.io/x":"1.5"}}}]}})");
  CHECK_FALSE(bad.ok());
}

}  // namespace topofit::k8s
