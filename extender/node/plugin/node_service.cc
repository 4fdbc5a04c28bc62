#include "extender/node/plugin/node_service.h"

#include "base/log.h"

namespace topofit::node {

int RunNodeService(const NodeOptions& options) {
  Log(LogLevel::kError, "topofit node: the device-plugin service is not built yet");
  return 1;
}

}  // namespace topofit::node
