// FillUnknownNicLinks. See nic_links.h for the contract.

#include "topology/nic_links.h"

#include <algorithm>

namespace topofit {

void FillUnknownNicLinks(const std::vector<bool>& row_known, TopoMatrix* m) {
  const int gpus = m->gpu_count(), nics = m->nic_count();
  for (int a = 0; a < nics; ++a) {
    for (int b = a + 1; b < nics; ++b) {
      if (row_known[a] || row_known[b]) continue;
      Link best{LinkClass::Sys, 0};
      for (int g = 0; g < gpus; ++g) best = std::max(best, std::min(m->gpu_nic[g][a], m->gpu_nic[g][b]));
      for (int k = 0; k < nics; ++k) {
        if (!row_known[k] || k == a || k == b) continue;
        best = std::max(best, std::min(m->nic_links[k][a], m->nic_links[k][b]));
      }
      m->nic_links[a][b] = m->nic_links[b][a] = best;
    }
  }
}

}  // namespace topofit
