// Pods that ask DRA GPUs through their own ResourceClaims or deviceclass.resource.kubernetes.io/<class>
// (docs/dra.md): kube-scheduler sends them to prioritize-pods-without-gpus only, and topofit scores
// each DRA node by the set the allocator will give them there.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "extender/cluster/testing/dra_builders.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
namespace {

using namespace cluster::testing;
using nlohmann::json;
using testing::LiveServer;

constexpr const char* kVerb = "/scheduler/prioritize-pods-without-gpus";

std::map<std::string, int> ScoresOf(const std::string& body) {
  std::map<std::string, int> out;
  for (const auto& hp : json::parse(body)) out[hp["Host"].get<std::string>()] = hp["Score"].get<int>();
  return out;
}

std::string Args(const std::string& spec) {
  return R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"pu"},"spec":)" + spec +
         R"(,"status":{}},"NodeNames":["cross","paired"]})";
}

k8s::ResourceClaimObject TwoGpuClaim(const std::string& constraints) {
  auto c = k8s::DecodeResourceClaim(R"({"metadata":{"name":"two","namespace":"ml","uid":"c-two"},"spec":{"devices":{
    "requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","count":2}}])" + constraints + "}}}");
  REQUIRE(c.ok());
  return *c;
}

}  // namespace

TEST_CASE("prioritize-pods-without-gpus: a pod's own claim and the implicit class name are scored by their predicted sets") {
  k8s::Snapshot s;
  s.nodes = {DecodedNode("cross", 0), DecodedNode("paired", 0)};
  s.device_classes = {GpuClass()};
  // cross tries 0,2 first (two PCIe roots), paired 0,1 (one root).
  s.resource_slices = {GpuSlice("cross", {0, 2, 1, 3}), GpuSlice("paired", {0, 1, 2, 3})};
  LiveServer srv(ServeConfig{}, s);

  srv.app->dra().ApplyResourceClaim(TwoGpuClaim(""));
  auto own = srv.Post(kVerb, Args(R"({"containers":[{"name":"c"}],"resourceClaims":[{"name":"g","resourceClaimName":"two"}]})"));
  REQUIRE(own);
  auto scores = ScoresOf(own->body);
  CHECK(scores.at("paired") > scores.at("cross"));

  auto implicit = srv.Post(kVerb, Args(R"({"containers":[{"name":"c","resources":{"limits":
    {"deviceclass.resource.kubernetes.io/gpu.nvidia.com":"2"}}}]})"));
  REQUIRE(implicit);
  CHECK(ScoresOf(implicit->body) == scores);

  // matchAttribute pcieRoot: the allocator backtracks to a same-root pair on cross too - no preference.
  srv.app->dra().ApplyResourceClaim(TwoGpuClaim(R"(,"constraints":[{"matchAttribute":"resource.kubernetes.io/pcieRoot"}])"));
  auto aligned = srv.Post(kVerb, Args(R"({"containers":[{"name":"c"}],"resourceClaims":[{"name":"g","resourceClaimName":"two"}]})"));
  REQUIRE(aligned);
  auto even = ScoresOf(aligned->body);
  CHECK(even.at("paired") == even.at("cross"));

  // A claim that is not there yet: scored as a pod without GPUs (both nodes alike).
  auto absent = srv.Post(kVerb, Args(R"({"containers":[{"name":"c"}],"resourceClaims":[{"name":"g","resourceClaimName":"nope"}]})"));
  REQUIRE(absent);
  auto plain = ScoresOf(absent->body);
  CHECK(plain.at("paired") == plain.at("cross"));
}

}  // namespace topofit::server
