#pragma once
// DeviceSelector: which devices of a ResourceSlice a DeviceClass admits, for the CEL selectors that
// GPU DeviceClasses use - conjunctions of equalities on the driver and on attributes:
//
//   device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"
//
// Accepted, per selector: terms joined by `&&`, each `LHS == LITERAL` (either side first), where LHS
// is device.driver, device.attributes["DOMAIN"].NAME or device.attributes["DOMAIN"]["NAME"] (quotes
// ' or "), and LITERAL a quoted string, an integer, true or false. A class's selectors all must hold.
// Anything else (other operators, functions, ||, capacity) is not evaluated here: Parse returns an
// Error naming the selector, and topofit then cannot tell which devices the class admits (docs/dra.md).
// Immutable after Parse; thread-safe to share.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace topofit::cluster {

class DeviceSelector {
 public:
  static Result<DeviceSelector> Parse(const std::vector<std::string>& cel_selectors);
  // `attributes` by qualified name (k8s::DraDevice::attributes).
  bool Matches(std::string_view driver, const std::map<std::string, std::string>& attributes) const;

 private:
  struct Term {
    std::string attribute;  // Qualified name; "" for device.driver.
    std::string value;
  };
  std::vector<Term> terms_;
};

}  // namespace topofit::cluster
