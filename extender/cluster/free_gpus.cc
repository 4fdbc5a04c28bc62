#include "extender/cluster/free_gpus.h"

namespace topofit::cluster {

void FreeGpus::Add(uint32_t product, int64_t gpus) {
  total += gpus;
  for (auto& [p, n] : by_product)
    if (p == product) {
      n += gpus;
      return;
    }
  by_product.emplace_back(product, gpus);
}

int64_t FreeGpus::Of(uint32_t product) const {
  for (const auto& [p, n] : by_product)
    if (p == product) return n;
  return 0;
}

}  // namespace topofit::cluster
