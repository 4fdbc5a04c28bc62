// Tests of the cloud machine-type table: every entry names a built-in profile of its GPU count, the
// lookup ignores case and knows nothing it was not given, and docs/cloud-machine-types.md documents
// every entry with the same profile.

#include "topology/machine_types.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "base/files.h"
#include "base/strings.h"
#include "topology/profiles.h"

namespace topofit {
namespace {

TEST_CASE("every machine type names a built-in profile with its GPU count") {
  const auto& types = MachineTypes();
  CHECK(types.size() >= 20);
  std::set<std::string> names;
  for (const MachineType& m : types) {
    CAPTURE(std::string(m.name));
    CHECK(names.insert(AsciiLower(m.name)).second);  // Unique, ignoring case.
    CHECK((m.provider == "aws" || m.provider == "gcp" || m.provider == "azure"));
    CHECK_FALSE(m.gpu.empty());
    // Only GKE nodes carry cloud.google.com/gke-accelerator.
    CHECK(m.gke_accelerator.empty() == (m.provider != "gcp"));
    Result<TopoMatrix> matrix = ProfileMatrix(m.profile);
    REQUIRE_MESSAGE(matrix.ok(), (matrix.ok() ? "" : matrix.error()));
    CHECK(matrix->gpu_count() == m.gpu_count);
  }
}

TEST_CASE("FindMachineType: exact names, any ASCII case, nothing else") {
  const MachineType* p4d = FindMachineType("p4d.24xlarge");
  REQUIRE(p4d != nullptr);
  CHECK(p4d->profile == "hgx-a100-8");
  CHECK(p4d->provider == "aws");
  const MachineType* nd = FindMachineType("standard_nd96isr_h100_v5");
  REQUIRE(nd != nullptr);
  CHECK(nd->name == "Standard_ND96isr_H100_v5");
  CHECK(nd->profile == "hgx-h100-8");
  const MachineType* a3 = FindMachineType("a3-highgpu-8g");
  REQUIRE(a3 != nullptr);
  CHECK(a3->gke_accelerator == "nvidia-h100-80gb");
  for (const char* unknown : {"", "p4d", "p4d.24xlarge ", "p5.4xlarge", "a2-highgpu-4g", "m5.large",
                              "Standard_ND96asr_v4x"}) {
    CAPTURE(std::string(unknown));
    CHECK(FindMachineType(unknown) == nullptr);
  }
}

TEST_CASE("docs/cloud-machine-types.md has a row for every machine type, with its profile") {
  Result<std::string> doc = ReadFile(std::string(TOPOFIT_SOURCE_DIR) + "/docs/cloud-machine-types.md");
  REQUIRE_MESSAGE(doc.ok(), (doc.ok() ? "" : doc.error()));
  int rows = 0;
  for (const MachineType& m : MachineTypes()) {
    CAPTURE(std::string(m.name));
    bool found = false;
    for (std::string_view line : SplitLines(*doc)) {
      // A table row that names the type in backticks and its profile in backticks.
      if (line.rfind("|", 0) != 0) continue;
      if (line.find("`" + std::string(m.name) + "`") == std::string_view::npos) continue;
      found = line.find("`" + std::string(m.profile) + "`") != std::string_view::npos;
      if (found) break;
    }
    CHECK(found);
    rows += found;
  }
  CHECK(rows == static_cast<int>(MachineTypes().size()));
}

}  // namespace
}  // namespace topofit
