// libFuzzer target: ParseTopoMatrix must return an Error, never crash, on any text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "topology/topo_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto result = topofit::ParseTopoMatrix(std::string_view(reinterpret_cast<const char*>(data), size));
  if (result.ok()) {
    // Invariants the parser promises (topo_matrix.h).
    const auto& m = *result;
    if (int(m.gpu_links.size()) != m.gpu_count()) __builtin_trap();
    for (int i = 0; i < m.gpu_count(); ++i)
      for (int j = 0; j < m.gpu_count(); ++j)
        if (!(m.gpu_links[i][j] == m.gpu_links[j][i])) __builtin_trap();
    // NIC links, including those filled in for NIC rows the text lacked.
    if (int(m.nic_links.size()) != m.nic_count()) __builtin_trap();
    for (int i = 0; i < m.nic_count(); ++i)
      for (int j = 0; j < m.nic_count(); ++j)
        if (!(m.nic_links[i][j] == m.nic_links[j][i]) || ((i == j) != (m.nic_links[i][j].cls == topofit::LinkClass::Self)))
          __builtin_trap();
    if (int(m.numa_affinity_list.size()) != m.gpu_count()) __builtin_trap();
  }
  return 0;
}
