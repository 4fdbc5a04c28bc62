#include "extender/model/topology_resolver.h"

#include <doctest/doctest.h>

#include "extender/model/model_test_util.h"

namespace topofit::model {
namespace {

using testing::MakeNode;

constexpr const char* kTwoNvText =
    "        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
    "GPU0     X      NV4     0-15    0\n"
    "GPU1    NV4      X      0-15    0\n";

bool Contains(const std::vector<std::string>& lines, std::string_view needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

TEST_CASE("resolver: annotation naming a built-in profile comes first") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  auto node = MakeNode("n1", 8, "dgx1-v100", {{k8s::kGfdProductLabel, "NVIDIA-A100-SXM4-80GB"}, {k8s::kGfdCountLabel, "8"}});
  ResolvedTopology r = resolver.Resolve(node);
  REQUIRE(r.topology);
  CHECK(r.source == TopologySource::kAnnotationProfile);
  CHECK(r.profile == "dgx1-v100");
  CHECK(r.usable == GpuSet::FirstN(8));
  CHECK(r.warnings.empty());
  CHECK(ToString(r.source) == "annotation-profile");
}

TEST_CASE("resolver: annotation holding nvidia-smi topo -m text") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MakeNode("n1", 2, kTwoNvText));
  REQUIRE(r.topology);
  CHECK(r.source == TopologySource::kAnnotationMatrix);
  CHECK(r.profile.empty());
  CHECK(r.topology->gpu_count() == 2);
  CHECK(r.topology->link(0, 1).cls == LinkClass::Nv);
  CHECK(r.warnings.empty());
}

TEST_CASE("resolver: an unparsable annotation falls through to GFD labels with a warning") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  auto node = MakeNode("n1", 8, "dgx9-unknown", {{k8s::kGfdProductLabel, "NVIDIA-A100-SXM4-80GB"}, {k8s::kGfdCountLabel, "8"}});
  ResolvedTopology r = resolver.Resolve(node);
  REQUIRE(r.topology);
  CHECK(r.source == TopologySource::kGfdLabels);
  CHECK(r.profile == "hgx-a100-8");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].rfind("topofit.io/gpu-topology 'dgx9-unknown': unknown profile", 0) == 0);
  CHECK(r.warnings[0].find("falling back") != std::string::npos);
}

TEST_CASE("resolver: broken matrix text falls back to generic PCIe and says where it broke") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MakeNode("n1", 2, "        GPU0    GPU1\nGPU0     X      NVX\n"));
  REQUIRE(r.topology);
  CHECK(r.source == TopologySource::kGenericFallback);
  CHECK(r.profile == "generic-pcie-2");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].rfind("topofit.io/gpu-topology (topo matrix): line", 0) == 0);
}

TEST_CASE("resolver: GFD labels - then generic-pcie-<allocatable>") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology gfd = resolver.Resolve(
      MakeNode("n1", 8, "", {{k8s::kGfdProductLabel, "Tesla-V100-SXM2-16GB"}, {k8s::kGfdCountLabel, "8"}}));
  CHECK(gfd.source == TopologySource::kGfdLabels);
  CHECK(gfd.profile == "dgx1-v100");

  ResolvedTopology unknown_product =
      resolver.Resolve(MakeNode("n2", 4, "", {{k8s::kGfdProductLabel, "Acme-X1"}, {k8s::kGfdCountLabel, "4"}}));
  CHECK(unknown_product.source == TopologySource::kGfdLabels);
  CHECK(unknown_product.profile == "generic-pcie-4");

  ResolvedTopology generic = resolver.Resolve(MakeNode("n3", 4));
  CHECK(generic.source == TopologySource::kGenericFallback);
  CHECK(generic.profile == "generic-pcie-4");
  CHECK(generic.topology->gpu_count() == 4);
  CHECK(generic.warnings.empty());
}

TEST_CASE("resolver: fewer allocatable GPUs than the topology uses the first ones - with a warning") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MakeNode("n1", 6, "dgx1-v100"));
  CHECK(r.source == TopologySource::kAnnotationProfile);
  CHECK(r.usable == GpuSet::FirstN(6));
  CHECK(r.allocatable == 6);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] ==
        "topofit.io/gpu-topology 'dgx1-v100' describes 8 GPUs but the node has 6 allocatable; using GPUs 0-5");
}

TEST_CASE("resolver: more allocatable GPUs than the topology falls back to generic") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MakeNode("n1", 4, "phb-2-workstation"));
  CHECK(r.source == TopologySource::kGenericFallback);
  CHECK(r.profile == "generic-pcie-4");
  CHECK(r.usable == GpuSet::FirstN(4));
  CHECK(Contains(r.warnings, "describes 2 GPUs but the node has 4 allocatable; falling back"));
}

TEST_CASE("resolver: a node without GPUs has no topology and no warning") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MakeNode("cpu", 0, "dgx1-v100"));
  CHECK_FALSE(r.topology);
  CHECK(r.source == TopologySource::kNone);
  CHECK(r.usable.empty());
  CHECK(r.warnings.empty());
}

TEST_CASE("resolver: topologies are interned across nodes and sources") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  auto a = resolver.Resolve(MakeNode("a", 8, "dgx1-v100"));
  auto b = resolver.Resolve(MakeNode("b", 8, "DGX1-V100"));
  auto c = resolver.Resolve(MakeNode("c", 8, "", {{k8s::kGfdProductLabel, "Tesla-V100-SXM2-32GB"}, {k8s::kGfdCountLabel, "8"}}));
  CHECK(a.topology == b.topology);
  CHECK(a.topology == c.topology);
  CHECK(registry.size() == 1);
}

}  // namespace
}  // namespace topofit::model
