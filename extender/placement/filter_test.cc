// Filter: pass, resolvable and unresolvable, with the exact reasons users see.
#include <doctest/doctest.h>

#include "extender/placement/pipeline.h"
#include "extender/placement/testing/placement_fixture.h"

namespace topofit::placement {
namespace {

using namespace testing;

struct Verdict {
  FilterCode code;
  std::string reason;
};

class FilterFixture : public PlacementFixture {
 public:
  FilterFixture() : PlacementFixture({{"dgx", 8, "dgx1-v100"}, {"pcie4", 4, "pcie-4-single-socket"}, {"cpu", 0, ""}}) {}
  Verdict On(const cluster::PodRequest& pod, const std::string& node) {
    std::vector<std::string> names{node};
    FilterOutcome out = pipeline.Filter(pod, names);
    if (!out.passed.empty()) return {FilterCode::kPass, ""};
    if (!out.failed.empty()) return {FilterCode::kFail, out.failed[0].reason};
    REQUIRE(out.unresolvable.size() == 1);
    return {FilterCode::kUnresolvable, out.unresolvable[0].reason};
  }
};

TEST_CASE("filter: not enough free GPUs is resolvable and lists the free ones") {
  FilterFixture f;
  f.model.ApplyPod(MakePod("a", 6, "dgx", "0,2,3,4,6,7"));
  Verdict v = f.On(Request("p", 4), "dgx");
  CHECK(v.code == FilterCode::kFail);
  CHECK(v.reason == "4 GPUs requested, 2 free (GPUs 1,5)");
  CHECK(f.On(Request("p", 2), "dgx").code == FilterCode::kPass);
  f.model.ApplyPod(MakePod("b", 1, "dgx", "1"));
  CHECK(f.On(Request("p", 2), "dgx").reason == "2 GPUs requested, 1 free (GPU 5)");
  f.model.ApplyPod(MakePod("c", 1, "dgx", "5"));
  CHECK(f.On(Request("p", 1), "dgx").reason == "1 GPU requested, 0 free");
}

TEST_CASE("filter: required NVLink with too few free GPUs names both problems") {
  FilterFixture f;
  f.model.ApplyPod(MakePod("a", 6, "dgx", "0,2,3,4,6,7"));
  Verdict v = f.On(Request("p", 4, Required()), "dgx");
  CHECK(v.code == FilterCode::kFail);
  CHECK(v.reason == "4 GPUs requested, 2 free (GPUs 1,5); no NVLink-connected set of 4 free");
}

TEST_CASE("filter: required NVLink with enough GPUs but no NVLink quad free is resolvable") {
  FilterFixture f;
  f.model.ApplyPod(MakePod("a", 4, "dgx", "2,3,6,7"));  // Free 0,1,4,5: no fully meshed quad.
  CHECK(f.On(Request("p", 4), "dgx").code == FilterCode::kPass);
  Verdict v = f.On(Request("p", 4, Required()), "dgx");
  CHECK(v.code == FilterCode::kFail);
  CHECK(v.reason == "no NVLink-connected set of 4 free");
  CHECK(f.On(Request("p", 2, Required()), "dgx").code == FilterCode::kPass);  // 0-1 is NVLink
}

TEST_CASE("filter: more GPUs than the node has is unresolvable") {
  FilterFixture f;
  Verdict v = f.On(Request("p", 8), "pcie4");
  CHECK(v.code == FilterCode::kUnresolvable);
  CHECK(v.reason == "8 GPUs requested, node has 4");
  Verdict none = f.On(Request("p", 1), "cpu");
  CHECK(none.code == FilterCode::kUnresolvable);
  CHECK(none.reason == "1 GPU requested, node has none");
}

TEST_CASE("filter: required NVLink on a PCIe node is unresolvable") {
  FilterFixture f;
  Verdict v = f.On(Request("p", 2, Required()), "pcie4");
  CHECK(v.code == FilterCode::kUnresolvable);
  CHECK(v.reason == "required: no NVLink-connected set of 2 on this node");
  Verdict pix = f.On(Request("p", 2, Required("PIX")), "pcie4");
  CHECK(pix.code == FilterCode::kUnresolvable);
  CHECK(pix.reason == "required: no set of 2 linked at PIX or better on this node");
  CHECK(f.On(Request("p", 2, Required("NODE")), "pcie4").code == FilterCode::kPass);
  CHECK(f.On(Request("p", 1, Required()), "pcie4").code == FilterCode::kPass);  // One GPU has no pairs.
  // Even when fully used, the verdict stays unresolvable: evicting cannot create NVLink.
  f.model.ApplyPod(MakePod("a", 4, "pcie4", "0,1,2,3"));
  CHECK(f.On(Request("p", 2, Required()), "pcie4").code == FilterCode::kUnresolvable);
}

TEST_CASE("filter: best-effort min-link is a preference - not a requirement") {
  FilterFixture f;
  CHECK(f.On(Request("p", 2, {{k8s::kMinLinkAnnotation, "NV"}}), "pcie4").code == FilterCode::kPass);
}

TEST_CASE("filter: unknown nodes are unresolvable - never a crash") {
  FilterFixture f;
  Verdict v = f.On(Request("p", 1), "nope");
  CHECK(v.code == FilterCode::kUnresolvable);
  CHECK(v.reason == "unknown node");
}

TEST_CASE("filter: pods asking for no GPU pass every node untouched") {
  FilterFixture f;
  std::vector<std::string> names{"dgx", "cpu", "nope"};
  FilterOutcome out = f.pipeline.Filter(Request("p", 0), names);
  CHECK(out.passed == std::vector<uint32_t>{0, 1, 2});
  CHECK(out.failed.empty());
  CHECK(out.unresolvable.empty());
}

TEST_CASE("filter: invalid annotations fail every node as unresolvable with the parse error") {
  FilterFixture f;
  std::vector<std::string> names{"dgx", "pcie4"};
  FilterOutcome out = f.pipeline.Filter(Request("p", 2, {{k8s::kTopologyPolicyAnnotation, "always"}}), names);
  CHECK(out.passed.empty());
  REQUIRE(out.unresolvable.size() == 2);
  CHECK(out.unresolvable[1].index == 1);
  CHECK(out.unresolvable[0].reason ==
        "invalid topofit.io/topology-policy 'always': expected best-effort, required or none");
}

TEST_CASE("filter: results refer to the request's node list by index - in order") {
  FilterFixture f;
  f.model.ApplyPod(MakePod("a", 8, "dgx", "0,1,2,3,4,5,6,7"));
  std::vector<std::string_view> names{"pcie4", "dgx", "cpu", "pcie4"};
  FilterOutcome out = f.pipeline.Filter(Request("p", 2), std::span<const std::string_view>(names));
  CHECK(out.passed == std::vector<uint32_t>{0, 3});
  REQUIRE(out.failed.size() == 1);
  CHECK(out.failed[0].index == 1);
  REQUIRE(out.unresolvable.size() == 1);
  CHECK(out.unresolvable[0].index == 2);
}

}  // namespace
}  // namespace topofit::placement

namespace topofit::placement {
namespace {

TEST_CASE("filter keeps best: only the best-scored nodes pass, the others fail resolvably saying why") {
  cluster::ClusterModel model;
  PipelineConfig config;
  config.filter_keeps_best = true;
  Pipeline keeps_best(&model, config);
  Pipeline plain(&model);
  model.ApplyNode(MakeNode("dgx", 8, "dgx1-v100"));
  model.ApplyNode(MakeNode("pcie", 8, "pcie-8-dual-socket"));
  model.ApplyNode(MakeNode("small", 2, "phb-2-workstation"));
  std::vector<std::string> names{"dgx", "pcie", "small"};
  cluster::PodRequest pod = Request("p", 4);

  // What prioritize would say, and what filter then keeps.
  auto scores = plain.Prioritize(pod, names);
  REQUIRE(scores.size() == 3);
  CHECK(scores[0].score > scores[1].score);  // NVLink quad against PCIe.
  FilterOutcome all = plain.Filter(pod, names);
  CHECK(all.passed == std::vector<uint32_t>{0, 1});
  FilterOutcome best = keeps_best.Filter(pod, names);
  CHECK(best.passed == std::vector<uint32_t>{0});
  REQUIRE(best.failed.size() == 1);
  CHECK(best.failed[0].index == 1);
  CHECK(best.failed[0].reason ==
        "another node fits better: score " + std::to_string(scores[1].score) + ", best " + std::to_string(scores[0].score));
  REQUIRE(best.unresolvable.size() == 1);  // Too small stays unresolvable, as without the option.
  CHECK(best.unresolvable[0].index == 2);

  // Equal best scores all pass; a single passing node is not scored at all.
  model.ApplyNode(MakeNode("dgx2", 8, "dgx1-v100"));
  std::vector<std::string> twins{"dgx", "dgx2", "pcie"};
  CHECK(keeps_best.Filter(pod, twins).passed == std::vector<uint32_t>{0, 1});
  std::vector<std::string> one{"pcie"};
  CHECK(keeps_best.Filter(pod, one).passed == std::vector<uint32_t>{0});
}

}  // namespace
}  // namespace topofit::placement
