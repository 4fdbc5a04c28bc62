// `topofit node`: the per-GPU-node process (extender/node/plugin/node_run.h). It sits between kubelet
// and the NVIDIA device plugin: it registers to kubelet as nvidia.com/gpu, serves a Registration
// socket the NVIDIA plugin registers to instead (its KUBELET_SOCKET), forwards ListAndWatch, Allocate
// and PreStartContainer unchanged and answers GetPreferredAllocation from topofit's per-container plan
// (topofit.io/gpu-plan); it also publishes the node's `nvidia-smi topo -m` and GPU UUIDs as Node
// annotations. Every socket is a flag, so a harness can run it against its own kubelet in a temporary
// directory. --ops-listen serves /healthz, /readyz and /metrics (extender/node/plugin/node_ops.h) on
// the listener `topofit serve --ops-listen` uses. Its flags, one per setting: node_settings.h; the
// command line itself, shared with the test build topofit-node-testing: node_command.h.
#include "extender/cli/command.h"
#include "extender/node/plugin/node_command.h"

namespace topofit::cli {

CommandRun SetupNode(CLI::App& sub) { return node::SetupNodeCommand(sub); }

}  // namespace topofit::cli
