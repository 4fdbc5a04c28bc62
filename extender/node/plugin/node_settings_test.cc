// The settings table of `topofit node` (node_settings.h): one row per NodeOptions member, each flag
// once, every default applies, NodeOptions() holds the defaults, bad durations name their flag.
#include "extender/node/plugin/node_settings.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace topofit::node {
namespace {

using namespace std::chrono_literals;

TEST_CASE("node settings: each flag once, each member once, every default applies") {
  std::set<std::string> flags;
  std::set<const void*> members;
  NodeOptions o;
  for (const NodeSetting& row : NodeSettings()) {
    CAPTURE(std::string(row.flag));
    CHECK(std::string(row.flag).rfind("--", 0) == 0);
    CHECK(flags.insert(row.flag).second);
    CHECK((row.text == nullptr) != (row.duration == nullptr));
    CHECK(members.insert(row.text ? static_cast<const void*>(&(o.*row.text))
                                  : static_cast<const void*>(&(o.*row.duration))).second);
    CHECK(*row.help);
    NodeOptions scratch;
    CHECK(ApplySetting(row, row.default_text, scratch).ok());
  }
  CHECK(flags.size() == 16);
}

TEST_CASE("node settings: NodeOptions() holds the table's defaults") {
  NodeOptions o;
  CHECK(o.node_name.empty());
  CHECK(o.device_plugin_dir == "/var/lib/kubelet/device-plugins");
  CHECK(o.kubelet_socket == "kubelet.sock");
  CHECK(o.registrar_socket == "topofit-registrar.sock");
  CHECK(o.front_socket == "topofit-nvidia-gpu.sock");
  CHECK(o.backend_socket.empty());
  CHECK(o.pod_resources_socket == "/var/lib/kubelet/pod-resources/kubelet.sock");
  CHECK(o.resource_name == "nvidia.com/gpu");
  CHECK(o.preferred_timeout == 1000ms);
  CHECK(o.get_timeout == 150ms);
  CHECK(o.reconcile_interval == 2000ms);
  CHECK(o.nvidia_smi == "nvidia-smi");
  CHECK(o.topology_interval == 300000ms);
  CHECK(o.ops_listen.empty());
}

TEST_CASE("node settings: a bad duration names its flag, text settings take any text") {
  NodeOptions o;
  for (const NodeSetting& row : NodeSettings()) {
    if (std::string(row.flag) == "--get-timeout") {
      Status st = ApplySetting(row, "soon", o);
      REQUIRE_FALSE(st.ok());
      CHECK(st.error().rfind("--get-timeout: invalid duration", 0) == 0);
      CHECK(ApplySetting(row, "1us", o).error() == "--get-timeout: shorter than 1ms");
      CHECK(ApplySetting(row, "250ms", o).ok());
      CHECK(o.get_timeout == 250ms);
    }
    if (std::string(row.flag) == "--pod-resources-socket") {
      CHECK(ApplySetting(row, "", o).ok());
      CHECK(o.pod_resources_socket.empty());
    }
  }
}

}  // namespace
}  // namespace topofit::node
