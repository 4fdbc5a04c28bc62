#include "extender/protocol/extender_args.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>

namespace topofit::protocol {

// Upstream's canonical encodings (k8s.io/kube-scheduler extender/v1 types_test.go).
constexpr const char* kCanonicalArgs =
    R"({"Pod":{"metadata":{"name":"podname"},"spec":{"containers":null},"status":{}},"Nodes":{"metadata":{},"items":[{"metadata":{"name":"nodename"},"spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}}]},"NodeNames":["node1"]})";

TEST_CASE("extender args: canonical encoding, both node lists") {
  auto args = DecodeExtenderArgs(kCanonicalArgs);
  REQUIRE_MESSAGE(args.ok(), (args.ok() ? "" : args.error()));
  CHECK(args->pod.meta.name == "podname");
  REQUIRE(args->node_names);
  CHECK(*args->node_names == std::vector<std::string_view>{"node1"});
  REQUIRE(args->nodes);
  REQUIRE(args->nodes->size() == 1);
  CHECK((*args->nodes)[0].name == "nodename");
  CHECK_FALSE((*args->nodes)[0].object);  // Names only unless asked.
  // The Node's bytes exactly as sent.
  std::string_view body = kCanonicalArgs;
  std::string_view json = (*args->nodes)[0].json;
  CHECK(json.data() >= body.data());
  CHECK(json.starts_with(R"({"metadata":{"name":"nodename"},"spec":{})"));
  CHECK(json.ends_with(R"("architecture":""}}})"));
}

TEST_CASE("extender args: node names are owned by the args, survive moves, and are unescaped") {
  std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["ip-10-0-100-7.ec2.internal","","a\u003cb","n\"q"]})";
  std::optional<ExtenderArgs> kept;
  {
    auto args = DecodeExtenderArgs(body);
    REQUIRE_MESSAGE(args.ok(), (args.ok() ? "" : args.error()));
    kept.emplace(std::move(*args));
  }
  body.assign(body.size(), 'x');  // The names must not point into the request body.
  REQUIRE(kept->node_names);
  CHECK(*kept->node_names == std::vector<std::string_view>{"ip-10-0-100-7.ec2.internal", "", "a<b", "n\"q"});
  ExtenderArgs moved = std::move(*kept);
  CHECK((*moved.node_names)[0] == "ip-10-0-100-7.ec2.internal");
}

TEST_CASE("extender args: full-node Nodes decoded on request, echoed as sent") {
  std::string body = R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[ {"metadata": {"name":"a"},)"
                     R"("status":{"allocatable":{"nvidia.com/gpu":"8"}}} , {"metadata":{"name":"b"}}]}})";
  ExtenderArgsOptions options;
  options.decode_node = [](std::string_view name) { return name == "a"; };
  auto args = DecodeExtenderArgs(body, options);
  REQUIRE_MESSAGE(args.ok(), (args.ok() ? "" : args.error()));
  REQUIRE(args->nodes->size() == 2);
  REQUIRE((*args->nodes)[0].object);
  CHECK((*args->nodes)[0].object->allocatable_gpus == 8);
  CHECK_FALSE((*args->nodes)[1].object);
  CHECK((*args->nodes)[0].json == R"({"metadata": {"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"8"}}})");
  CHECK((*args->nodes)[1].json == R"({"metadata":{"name":"b"}})");
}

TEST_CASE("extender args: a Nodes key written with escapes falls back to re-printed Nodes") {
  auto args = DecodeExtenderArgs(R"({"Pod":{},"N\u006fdes":{"items":[{"metadata":{"name":"a"}, "spec": {}}]}})");
  REQUIRE_MESSAGE(args.ok(), (args.ok() ? "" : args.error()));
  REQUIRE(args->nodes->size() == 1);
  CHECK((*args->nodes)[0].name == "a");
  CHECK((*args->nodes)[0].json == R"({"metadata":{"name":"a"},"spec":{}})");
  ExtenderArgs moved = std::move(*args);  // Views into json_storage survive a move.
  CHECK((*moved.nodes)[0].json == R"({"metadata":{"name":"a"},"spec":{}})");
}

TEST_CASE("extender args: of duplicate Nodes keys the last wins, echoed as sent") {
  auto args = DecodeExtenderArgs(
      R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":"a"}}]},"nodes":{"items":[{"metadata":{"name":"b"},  "x":1}]}})");
  REQUIRE_MESSAGE(args.ok(), (args.ok() ? "" : args.error()));
  REQUIRE(args->nodes->size() == 1);
  CHECK((*args->nodes)[0].name == "b");
  CHECK((*args->nodes)[0].json == R"({"metadata":{"name":"b"},  "x":1})");
}

TEST_CASE("extender args: a padded body is parsed in place with the same result") {
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a","b"],"Nodes":{"items":[{"metadata":{"name":"n"},"x":[1,2]}]}})";
  // At an odd address, followed by kJsonPadding zero bytes, as HttpListener hands bodies over.
  std::string buffer(1 + body.size() + kJsonPadding, '\0');
  buffer.replace(1, body.size(), body);
  ExtenderArgsOptions in_place;
  in_place.padded = true;
  auto a = DecodeExtenderArgs(std::string_view(buffer.data() + 1, body.size()), in_place);
  auto b = DecodeExtenderArgs(body);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(*a->node_names == *b->node_names);
  REQUIRE(a->nodes->size() == 1);
  CHECK((*a->nodes)[0].json == (*b->nodes)[0].json);
  CHECK((*a->nodes)[0].json.data() == buffer.data() + 1 + body.find(R"({"metadata":{"name":"n"})"));  // A view, not a copy.
  CHECK(a->pod.meta.name == "p");
  auto bad = DecodeExtenderArgs(std::string_view(buffer.data() + 1, body.size() - 1), in_place);  // Cut short.
  CHECK_FALSE(bad.ok());
}

TEST_CASE("extender args: a later Nodes or NodeNames replaces an earlier one, with or without items, or null") {
  // Found by the fuzzer: the second Nodes has no items key.
  auto args = DecodeExtenderArgs(
      R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":"a"}}]},"NodEs":{"metadata":{}},"NodeNames":["x"],"nodenames":null})");
  REQUIRE_MESSAGE(args.ok(), (args.ok() ? "" : args.error()));
  REQUIRE(args->nodes);
  CHECK(args->nodes->empty());
  CHECK_FALSE(args->node_names);
  auto nulled = DecodeExtenderArgs(R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":"a"}}]},"nodes":null})");
  REQUIRE(nulled.ok());
  CHECK_FALSE(nulled->nodes);
}

TEST_CASE("extender args: lower-case keys and nulls") {
  auto args = DecodeExtenderArgs(R"({"pod":{"metadata":{"name":"p"}},"nodes":null,"nodenames":["a","b"]})");
  REQUIRE(args.ok());
  CHECK_FALSE(args->nodes);
  CHECK(args->node_names->size() == 2);
}

TEST_CASE("extender args: malformed") {
  CHECK(DecodeExtenderArgs("not json").error().find("invalid JSON") == 0);
  CHECK(DecodeExtenderArgs("").error().find("invalid JSON") == 0);  // Found by the fuzzer (null memcpy).
  CHECK(DecodeExtenderArgs(R"({"NodeNames":["a"]})").error() == "missing Pod");
  CHECK(DecodeExtenderArgs(R"({"Pod":null,"NodeNames":["a"]})").error() == "missing Pod");
  CHECK(DecodeExtenderArgs(R"({"Pod":{},"NodeNames":"a"})").error().find("NodeNames") == 0);
  CHECK(DecodeExtenderArgs(R"({"Pod":{},"NodeNames":[1]})").error().find("NodeNames[0]") == 0);
  CHECK(DecodeExtenderArgs(R"({"Pod":[],"NodeNames":[]})").error().find("Pod") != std::string::npos);
  CHECK_FALSE(DecodeExtenderArgs(R"([1,2])").ok());
  CHECK_FALSE(DecodeExtenderArgs(R"({"Pod":{}} x)").ok());
  auto frac = DecodeExtenderArgs(
      R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}},"NodeNames":["a"]})");
  REQUIRE_FALSE(frac.ok());
  CHECK(frac.error().find("Pod.spec.containers[0]") != std::string::npos);
}

TEST_CASE("binding and preemption args") {
  auto bind = DecodeBindingArgs(
      R"({"PodName":"mypodname","PodNamespace":"mypodnamespace","PodUID":"mypoduid","Node":"mynode"})");
  REQUIRE(bind.ok());
  CHECK(bind->pod_uid == "mypoduid");
  CHECK(bind->node == "mynode");
  CHECK(DecodeBindingArgs(R"({"podname":"a","node":"n"})").ok());
  CHECK_FALSE(DecodeBindingArgs(R"({"PodName":1,"Node":"n"})").ok());
  CHECK_FALSE(DecodeBindingArgs(R"({"PodName":"a"})").ok());

  auto pre = DecodePreemptionArgs(
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":{"foo":{"Pods":[{"metadata":{"uid":"v1"}}],"NumPDBViolations":1}},"NodeNameToMetaVictims":{"foo":{"Pods":[{"UID":"myuid"}],"NumPDBViolations":1}}})");
  REQUIRE_MESSAGE(pre.ok(), (pre.ok() ? "" : pre.error()));
  CHECK(pre->node_to_victims.at("foo").uids == std::vector<std::string>{"v1"});
  CHECK(pre->node_to_meta_victims.at("foo").uids == std::vector<std::string>{"myuid"});
  CHECK(pre->node_to_meta_victims.at("foo").num_pdb_violations == 1);
  CHECK_FALSE(DecodePreemptionArgs(R"({"Pod":{},"NodeNameToMetaVictims":{"foo":{"Pods":[{}]}}})").ok());
  CHECK_FALSE(DecodePreemptionArgs(R"({"Pod":{},"NodeNameToMetaVictims":{"foo":{"NumPDBViolations":1.5}}})").ok());
}

}  // namespace topofit::protocol
