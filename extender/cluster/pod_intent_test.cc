#include "extender/cluster/pod_intent.h"

#include <doctest/doctest.h>

#include "extender/cluster/testing/builders.h"

namespace topofit::cluster {
namespace {

using testing::MakePod;

TEST_CASE("pod intent: defaults to best-effort without min-link") {
  auto r = ParsePodIntent({});
  REQUIRE(r.ok());
  CHECK(r->policy == TopologyPolicy::kBestEffort);
  CHECK_FALSE(r->min_link.has_value());
  CHECK_FALSE(r->EffectiveMinLink().has_value());
}

TEST_CASE("pod intent: policies and min-link - case-insensitive") {
  auto r = ParsePodIntent({{k8s::kTopologyPolicyAnnotation, "Required"}, {k8s::kMinLinkAnnotation, " pix "}});
  REQUIRE(r.ok());
  CHECK(r->policy == TopologyPolicy::kRequired);
  CHECK(r->min_link == LinkClass::Pix);
  CHECK(r->EffectiveMinLink() == LinkClass::Pix);

  auto none = ParsePodIntent({{k8s::kTopologyPolicyAnnotation, "none"}, {k8s::kMinLinkAnnotation, "NV"}});
  REQUIRE(none.ok());
  CHECK(none->policy == TopologyPolicy::kNone);
  CHECK_FALSE(none->EffectiveMinLink().has_value());  // none ignores topology entirely

  auto be = ParsePodIntent({{k8s::kTopologyPolicyAnnotation, "best-effort"}, {k8s::kMinLinkAnnotation, "NODE"}});
  REQUIRE(be.ok());
  CHECK(be->EffectiveMinLink() == LinkClass::Node);
}

TEST_CASE("pod intent: required without min-link means NVLink") {
  auto r = ParsePodIntent({{k8s::kTopologyPolicyAnnotation, "required"}});
  REQUIRE(r.ok());
  CHECK_FALSE(r->min_link.has_value());
  CHECK(r->EffectiveMinLink() == LinkClass::Nv);
}

TEST_CASE("pod intent: invalid values are errors naming the annotation and the choices") {
  auto p = ParsePodIntent({{k8s::kTopologyPolicyAnnotation, "strict"}});
  REQUIRE_FALSE(p.ok());
  CHECK(p.error() == "invalid topofit.io/topology-policy 'strict': expected best-effort, required or none");

  auto m = ParsePodIntent({{k8s::kMinLinkAnnotation, "NVX"}});
  REQUIRE_FALSE(m.ok());
  CHECK(m.error() == "invalid topofit.io/min-link 'NVX': expected NV, PIX, PXB, PHB, NODE or SYS");

  auto both = ParsePodIntent({{k8s::kTopologyPolicyAnnotation, "x"}, {k8s::kMinLinkAnnotation, "y"}});
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().find("; ") != std::string::npos);
}

TEST_CASE("pod request: carries count - priority - identity and the annotation error") {
  auto pod = MakePod("u1", 4, "", "", 7, {{k8s::kMinLinkAnnotation, "fast"}});
  PodRequest r = MakePodRequest(pod);
  CHECK(r.uid == "u1");
  CHECK(r.key() == "default/pod-u1");
  CHECK(r.gpus == 4);
  CHECK(r.priority == 7);
  CHECK(r.wants_gpus());
  CHECK(r.error == "invalid topofit.io/min-link 'fast': expected NV, PIX, PXB, PHB, NODE or SYS");
  CHECK_FALSE(MakePodRequest(MakePod("u2", 0)).wants_gpus());
}

}  // namespace
}  // namespace topofit::cluster
