// NodeStore and PodStore on their own: lists delivered item by item, lists that fail part way.
#include "extender/apiclient/object_stores.h"

#include <doctest/doctest.h>

#include "extender/apiclient/testing/fake_apiserver.h"
#include "extender/apiclient/testing/recording_sink.h"

namespace topofit::apiclient {
namespace {

using testing::NodeJson;
using testing::PodJson;
using testing::RecordingSink;

TEST_CASE("stores: a completed list replaces, a list that failed part way deletes nothing until the next completes") {
  RecordingSink sink;
  std::vector<std::string> logs;
  NodeStore nodes(sink, [&](const std::string& m) { logs.push_back(m); });
  nodes.BeginList();
  nodes.ListItem(NodeJson("n1", 8).dump());
  nodes.ListItem(NodeJson("n2", 8).dump());
  nodes.EndList();
  CHECK(sink.nodes().size() == 2);
  // A list that delivers n3 and then fails: n3 is applied (it was current), nothing is deleted.
  nodes.BeginList();
  nodes.ListItem(NodeJson("n3", 8).dump());
  CHECK(sink.nodes().size() == 3);
  // The next list completes without n1 and n3: both leave, n3 too though it came from the failed list.
  nodes.BeginList();
  nodes.ListItem(NodeJson("n2", 8).dump());
  nodes.ListItem(NodeJson("n4", 8).dump());
  nodes.EndList();
  auto now = sink.nodes();
  CHECK(now.size() == 2);
  CHECK(now.count("n2"));
  CHECK(now.count("n4"));
  CHECK(nodes.size() == 2);
  // An unreadable item is skipped with a log line naming it.
  nodes.BeginList();
  nodes.ListItem(R"({"metadata":{"name":"bad"},"status":{"allocatable":{"nvidia.com/gpu":"0.5"}}})");
  nodes.EndList();
  CHECK(sink.nodes().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].find("node skipped: ") == 0);
  CHECK(logs[0].find("bad") != std::string::npos);
}

TEST_CASE("stores: pods - only live GPU pods are held, a finished one leaves during a list") {
  RecordingSink sink;
  PodStore pods(sink, [](const std::string&) {});
  pods.BeginList();
  pods.ListItem(PodJson("ml", "a", "uid-a", 2, "n1", "0,1", "Running").dump());
  pods.ListItem(PodJson("ml", "cpu", "uid-cpu", 0, "n1").dump());
  pods.ListItem(PodJson("ml", "b", "uid-b", 1, "n1", "2", "Running").dump());
  pods.EndList();
  CHECK(sink.pods().size() == 2);
  pods.BeginList();
  pods.ListItem(PodJson("ml", "a", "uid-a", 2, "n1", "0,1", "Succeeded").dump());  // Gone at once.
  CHECK(sink.pods().count("uid-a") == 0);
  pods.ListItem(PodJson("ml", "b", "uid-b", 1, "n1", "2", "Running").dump());
  pods.EndList();
  CHECK(sink.pods().size() == 1);
  CHECK(pods.size() == 1);
}

}  // namespace
}  // namespace topofit::apiclient
