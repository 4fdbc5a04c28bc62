#include "extender/cluster/device_selector.h"

#include <doctest/doctest.h>

namespace topofit::cluster {

TEST_CASE("DeviceSelector: conjunctions of equalities on the driver and attributes") {
  auto s = DeviceSelector::Parse({"device.driver == 'gpu.nvidia.com' && device.attributes[\"gpu.nvidia.com\"].type == \"gpu\"",
                                  "'A100' == device.attributes['gpu.nvidia.com']['productName']"});
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error()));
  std::map<std::string, std::string> attrs{{"gpu.nvidia.com/type", "gpu"}, {"gpu.nvidia.com/productName", "A100"}};
  CHECK(s->Matches("gpu.nvidia.com", attrs));
  CHECK_FALSE(s->Matches("other", attrs));
  attrs["gpu.nvidia.com/type"] = "mig";
  CHECK_FALSE(s->Matches("gpu.nvidia.com", attrs));
  auto ints = DeviceSelector::Parse({"device.attributes['d'].index == 3 && device.attributes['d'].vf == false"});
  REQUIRE(ints.ok());
  CHECK(ints->Matches("d", {{"d/index", "3"}, {"d/vf", "false"}}));
  CHECK(DeviceSelector::Parse({}).ok());  // No selector: every device.
}

TEST_CASE("DeviceSelector: what it does not evaluate is an error naming the selector") {
  for (const char* bad : {"device.driver != 'x'", "device.driver == 'a' || device.driver == 'b'",
                          "device.capacity['d'].memory >= quantity('40Gi')", "device.driver == 'a' &&",
                          "device.attributes['d'].x == 'unterminated"}) {
    auto s = DeviceSelector::Parse({bad});
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().find(bad) != std::string::npos);
  }
}

}  // namespace topofit::cluster
