#include "extender/cluster/topology_resolver.h"

#include <doctest/doctest.h>

#include "extender/cluster/testing/builders.h"
#include "topology/machine_types.h"

namespace topofit::cluster {
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

TEST_CASE("resolver: cloud instance types on EKS, GKE and AKS resolve to their profiles") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  struct Case {
    const char* node;
    int gpus;
    std::map<std::string, std::string> labels;
    const char* profile;
  };
  const Case cases[] = {
      {"eks-p4d", 8, {{k8s::kInstanceTypeLabel, "p4d.24xlarge"}}, "hgx-a100-8"},
      {"eks-p5", 8, {{k8s::kInstanceTypeLabel, "p5.48xlarge"}}, "hgx-h100-8"},
      {"eks-g5", 4, {{k8s::kInstanceTypeLabel, "g5.12xlarge"}}, "pcie-4-single-socket"},
      {"eks-g6e", 8, {{k8s::kInstanceTypeLabel, "g6e.48xlarge"}}, "pcie-8-dual-socket"},
      {"gke-a2", 8, {{k8s::kInstanceTypeLabel, "a2-highgpu-8g"}, {k8s::kGkeAcceleratorLabel, "nvidia-tesla-a100"}},
       "hgx-a100-8"},
      {"gke-a2-mega", 16,
       {{k8s::kInstanceTypeLabel, "a2-megagpu-16g"}, {k8s::kGkeAcceleratorLabel, "nvidia-tesla-a100"}},
       "hgx-a100-16"},
      {"gke-a3", 8, {{k8s::kInstanceTypeLabel, "a3-highgpu-8g"}, {k8s::kGkeAcceleratorLabel, "nvidia-h100-80gb"}},
       "hgx-h100-8"},
      {"aks-nd-a100", 8, {{k8s::kInstanceTypeLabel, "Standard_ND96asr_v4"}}, "hgx-a100-8"},
      {"aks-nd-h100", 8, {{k8s::kInstanceTypeLabel, "Standard_ND96isr_H100_v5"}}, "hgx-h100-8"},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.node));
    ResolvedTopology r = resolver.Resolve(MakeNode(c.node, c.gpus, "", c.labels));
    REQUIRE(r.topology);
    CHECK(r.source == TopologySource::kCloudInstanceType);
    CHECK(ToString(r.source) == "cloud-instance-type");
    CHECK(r.profile == c.profile);
    CHECK(r.topology->gpu_count() == c.gpus);
    CHECK(r.usable == GpuSet::FirstN(c.gpus));
    CHECK(r.warnings.empty());
  }
  // Every entry of the table, with the labels its cloud sets.
  for (const MachineType& m : MachineTypes()) {
    CAPTURE(std::string(m.name));
    std::map<std::string, std::string> labels{{k8s::kInstanceTypeLabel, std::string(m.name)}};
    if (!m.gke_accelerator.empty()) labels[k8s::kGkeAcceleratorLabel] = std::string(m.gke_accelerator);
    ResolvedTopology r = resolver.Resolve(MakeNode("n", m.gpu_count, "", labels));
    CHECK(r.source == TopologySource::kCloudInstanceType);
    CHECK(r.profile == m.profile);
    CHECK(r.warnings.empty());
  }
}

TEST_CASE("resolver: the cloud machine type comes before GFD labels, the annotation before both") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  // g5.48xlarge: GFD's product alone gives no profile (generic-pcie-8); the machine type gives the sockets.
  std::map<std::string, std::string> g5{{k8s::kInstanceTypeLabel, "g5.48xlarge"},
                                        {k8s::kGfdProductLabel, "NVIDIA-A10G"},
                                        {k8s::kGfdCountLabel, "8"}};
  ResolvedTopology cloud = resolver.Resolve(MakeNode("g5", 8, "", g5));
  CHECK(cloud.source == TopologySource::kCloudInstanceType);
  CHECK(cloud.profile == "pcie-8-dual-socket");
  CHECK(cloud.topology->numa_node(3) == 0);
  CHECK(cloud.topology->numa_node(4) == 1);

  // An annotation that cannot describe the node falls through to the machine type, with a warning...
  ResolvedTopology broken =
      resolver.Resolve(MakeNode("p4d", 8, kTwoNvText, {{k8s::kInstanceTypeLabel, "p4d.24xlarge"}}));
  CHECK(broken.source == TopologySource::kCloudInstanceType);
  CHECK(broken.profile == "hgx-a100-8");
  REQUIRE(broken.warnings.size() == 1);
  CHECK(broken.warnings[0].find("describes 2 GPUs but the node has 8 allocatable; falling back") != std::string::npos);
  // ...and a usable one wins over it.
  ResolvedTopology wins =
      resolver.Resolve(MakeNode("p4d", 8, "dgx-a100", {{k8s::kInstanceTypeLabel, "p4d.24xlarge"}}));
  CHECK(wins.source == TopologySource::kAnnotationProfile);
  CHECK(wins.profile == "dgx-a100");
  CHECK(wins.warnings.empty());
}

TEST_CASE("resolver: an unknown instance type falls through to GFD labels, then generic") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology gfd = resolver.Resolve(MakeNode(
      "n1", 4, "",
      {{k8s::kInstanceTypeLabel, "a2-highgpu-4g"}, {k8s::kGfdProductLabel, "NVIDIA-L40S"}, {k8s::kGfdCountLabel, "4"}}));
  CHECK(gfd.source == TopologySource::kGfdLabels);
  CHECK(gfd.profile == "pcie-4-single-socket");
  CHECK(gfd.warnings.empty());  // Not knowing a machine type is not a problem worth a warning.

  ResolvedTopology generic = resolver.Resolve(MakeNode("n2", 4, "", {{k8s::kInstanceTypeLabel, "g4dn.12xlarge"}}));
  CHECK(generic.source == TopologySource::kGenericFallback);
  CHECK(generic.profile == "generic-pcie-4");
  CHECK(generic.warnings.empty());
}

TEST_CASE("resolver: a GKE accelerator label that contradicts the machine type is not trusted") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MakeNode("n1", 8, "",
                                                 {{k8s::kInstanceTypeLabel, "a3-highgpu-8g"},
                                                  {k8s::kGkeAcceleratorLabel, "nvidia-l4"},
                                                  {k8s::kGfdProductLabel, "NVIDIA-H100-80GB-HBM3"},
                                                  {k8s::kGfdCountLabel, "8"}}));
  CHECK(r.source == TopologySource::kGfdLabels);
  CHECK(r.profile == "hgx-h100-8");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] ==
        "instance type a3-highgpu-8g (H100 80GB SXM5 x8 -> hgx-h100-8): label cloud.google.com/gke-accelerator is "
        "'nvidia-l4', not 'nvidia-h100-80gb'; falling back");
}

TEST_CASE("resolver: a cloud machine type with fewer allocatable GPUs uses the first ones - with a warning") {
  TopologyRegistry registry;
  TopologyResolver resolver(&registry);
  ResolvedTopology r = resolver.Resolve(MakeNode("n1", 6, "", {{k8s::kInstanceTypeLabel, "p5.48xlarge"}}));
  CHECK(r.source == TopologySource::kCloudInstanceType);
  CHECK(r.usable == GpuSet::FirstN(6));
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] ==
        "instance type p5.48xlarge (H100 80GB SXM5 x8 -> hgx-h100-8) describes 8 GPUs but the node has 6 "
        "allocatable; using GPUs 0-5");
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
}  // namespace topofit::cluster
