#pragma once
// RunNodeService: the whole of `topofit node` - registrar, front plugin, backend client, the pod
// and plan cache, the reconciler and, when asked, the fake backend - until SIGTERM or SIGINT.
// Returns the process exit status: 0 after a signal, 1 when a socket cannot be served, 2 on bad options.

#include "extender/node/plugin/node_options.h"

namespace topofit::node {

int RunNodeService(const NodeOptions& options);

}  // namespace topofit::node
