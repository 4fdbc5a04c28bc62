#include "extender/node/mig_listing.h"

#include <doctest/doctest.h>

namespace topofit::node {
namespace {

const std::vector<std::string> kGpus = {"GPU-aaa", "GPU-bbb"};

// As nvidia-smi -L prints two A100s, the first split into three 2g.20gb devices, the second whole.
constexpr const char* kListing =
    "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aaa)\n"
    "  MIG 2g.20gb     Device  0: (UUID: MIG-a0)\n"
    "  MIG 2g.20gb     Device  1: (UUID: MIG-a1)\n"
    "  MIG 2g.20gb     Device  2: (UUID: MIG-a2)\n"
    "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-bbb)\n";

TEST_CASE("mig listing: MIG devices under their GPU, encoded GPU by GPU") {
  auto d = ParseMigListing(kListing, kGpus);
  REQUIRE_MESSAGE(d.ok(), d.error());
  REQUIRE(d->size() == 2);
  CHECK((*d)[0] == std::vector<std::string>{"MIG-a0", "MIG-a1", "MIG-a2"});
  CHECK((*d)[1].empty());
  CHECK(EncodeMigUuids(*d) == "MIG-a0,MIG-a1,MIG-a2;");
  auto none = ParseMigListing("GPU 0: X (UUID: GPU-aaa)\nGPU 1: X (UUID: GPU-bbb)\n", kGpus);
  REQUIRE(none.ok());
  CHECK(EncodeMigUuids(*none).empty());
}

TEST_CASE("mig listing: a MIG line before a GPU, a GPU that disagrees with --query-gpu, a missing UUID") {
  CHECK_FALSE(ParseMigListing("  MIG 1g.10gb Device 0: (UUID: MIG-x)\nGPU 0: X (UUID: GPU-aaa)\n", kGpus).ok());
  auto swapped = ParseMigListing("GPU 0: X (UUID: GPU-bbb)\nGPU 1: X (UUID: GPU-aaa)\n", kGpus);
  REQUIRE_FALSE(swapped.ok());
  CHECK(swapped.error().find("line 1") != std::string::npos);
  CHECK_FALSE(ParseMigListing("GPU 0: X (UUID: GPU-aaa)\n", kGpus).ok());  // GPU 1 missing.
  CHECK_FALSE(ParseMigListing("GPU 0: X (UUID: GPU-aaa)\n  MIG 1g.10gb Device 0:\nGPU 1: X (UUID: GPU-bbb)\n", kGpus).ok());
  CHECK_FALSE(ParseMigListing("GPU x: X (UUID: GPU-aaa)\n", kGpus).ok());
}

}  // namespace
}  // namespace topofit::node
