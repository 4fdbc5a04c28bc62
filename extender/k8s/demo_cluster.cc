#include "extender/k8s/demo_cluster.h"

namespace topofit::k8s {

Result<Snapshot> LoadDemoCluster() { return LoadSnapshot(DemoClusterYaml()); }

}  // namespace topofit::k8s
