#include "extender/k8s/dra_decoder.h"

#include <doctest/doctest.h>

#include <string>

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
}

}  // namespace topofit::k8s
