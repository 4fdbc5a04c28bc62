#include "extender/k8s/effective_request.h"

#include <doctest/doctest.h>

namespace topofit::k8s {

TEST_CASE("effective request: containers add up") {
  auto r = ComputeEffectiveRequest({{.gpus = 2}, {.gpus = 1}}, {});
  CHECK(r.gpus == 3);
}

TEST_CASE("effective request: the largest regular init container wins when larger") {
  auto r = ComputeEffectiveRequest({{.gpus = 2}}, {{.gpus = 4}, {.gpus = 1}});
  CHECK(r.gpus == 4);
  r = ComputeEffectiveRequest({{.gpus = 8}}, {{.gpus = 4}});
  CHECK(r.gpus == 8);
}

TEST_CASE("effective request: sidecars add to the sum and to later init containers") {
  // sidecar 1 + main 2 = 3; regular init after the sidecar peaks at 1 + 3 = 4.
  auto r = ComputeEffectiveRequest({{.gpus = 2}}, {{.gpus = 1, .restartable = true}, {.gpus = 3}});
  CHECK(r.gpus == 4);
  // A regular init before the sidecar does not run beside it.
  r = ComputeEffectiveRequest({{.gpus = 2}}, {{.gpus = 3}, {.gpus = 1, .restartable = true}});
  CHECK(r.gpus == 3);
  r = ComputeEffectiveRequest({{.cpu_milli = 500}}, {{.cpu_milli = 250, .restartable = true}});
  CHECK(r.cpu_milli == 750);
}

}  // namespace topofit::k8s
