// LiveCluster against a local HTTPS FakeApiServer: list, watch, 410, reconnects, token rotation.
#include "extender/apiclient/live_cluster.h"

#include <doctest/doctest.h>

#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "extender/apiclient/testing/fake_apiserver.h"
#include "extender/apiclient/testing/recording_sink.h"

namespace topofit::apiclient {
namespace {

using testing::FakeApiServer;
using testing::NodeJson;
using testing::PodJson;
using testing::RecordingSink;
using testing::WaitFor;

struct Fixture {
  FakeApiServer server;
  RecordingSink sink;
  std::string token_file;
  std::vector<std::string> logs;
  std::mutex logs_mu;

  Fixture() {
    server.SetTokens({"t1"});
    token_file = testing::WriteTempFile("live-token", "t1");
  }

  LiveOptions Options() {
    LiveOptions o;
    o.kubeconfig = testing::WriteTempFile(
        "live.kubeconfig",
        testing::KubeconfigYaml(server.url(), testing::GetTestPki().ca_pem, "    tokenFile: " + token_file + "\n"));
    o.watch.backoff_initial = std::chrono::milliseconds(20);
    o.watch.backoff_max = std::chrono::milliseconds(200);
    o.watch.watch_timeout_min = std::chrono::seconds(1);
    o.watch.read_slack = std::chrono::milliseconds(2000);
    o.watch.page_size = 2;  // Exercise continue tokens.
    o.api.request_timeout = std::chrono::milliseconds(2000);
    o.log = [this](const std::string& m) {
      std::lock_guard<std::mutex> lock(logs_mu);
      logs.push_back(m);
    };
    return o;
  }

  std::unique_ptr<LiveCluster> Start() {
    auto live = LiveCluster::Start(Options(), sink);
    REQUIRE_MESSAGE(live.ok(), live.error());
    return std::move(*live);
  }
};

TEST_CASE("live: first list of both kinds makes it ready, only live GPU pods reach the sink") {
  Fixture f;
  for (int i = 1; i <= 5; ++i) f.server.Put("nodes", NodeJson("n" + std::to_string(i), 8));
  f.server.Put("pods", PodJson("ml", "bound", "uid-bound", 4, "n1", "0,1,2,3", "Running"));
  f.server.Put("pods", PodJson("ml", "pending", "uid-pending", 2));
  f.server.Put("pods", PodJson("ml", "cpu-only", "uid-cpu", 0, "n1"));
  f.server.Put("pods", PodJson("ml", "done", "uid-done", 8, "n2", "0,1,2,3,4,5,6,7", "Succeeded"));
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));
  CHECK(f.sink.nodes().size() == 5);
  auto pods = f.sink.pods();
  CHECK(pods.size() == 2);
  REQUIRE(pods.count("uid-bound"));
  CHECK(pods["uid-bound"].node_name == "n1");
  CHECK(pods["uid-bound"].meta.annotations["topofit.io/gpu-ids"] == "0,1,2,3");
  CHECK(pods.count("uid-pending"));
  CHECK(f.server.lists("nodes") == 3);  // 5 nodes in pages of 2.
}

TEST_CASE("live: the first list follows continue tokens, and an expired token lists again without paging") {
  Fixture f;
  for (int i = 1; i <= 5; ++i) f.server.Put("nodes", NodeJson("n" + std::to_string(i), 8));
  f.server.Put("pods", PodJson("ml", "bound", "uid-bound", 4, "n5", "0,1,2,3", "Running"));
  f.server.ExpireNextContinue();  // Page 2 of the nodes gets 410 Expired.
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));
  CHECK(f.sink.nodes().size() == 5);
  CHECK(f.sink.pods().count("uid-bound") == 1);
  CHECK(f.server.lists("nodes") == 3);  // Page 1, page 2 (410), then one list of all 5.
  CHECK(f.server.unpaged_lists() == 1);
  CHECK(f.server.lists("pods") == 1);
  CHECK(live->node_reflector().lists() == 1);
  std::lock_guard<std::mutex> lock(f.logs_mu);
  bool logged = false;
  for (const auto& m : f.logs) logged |= m.find("continue token expired; listing without paging") != std::string::npos;
  CHECK(logged);
}

TEST_CASE("live: not ready while the API server refuses us") {
  Fixture f;
  f.server.SetTokens({"other"});
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return f.server.unauthorized() >= 2; }));
  CHECK_FALSE(live->ready());
  f.server.SetTokens({"t1"});
  CHECK(WaitFor([&] { return live->ready(); }));
}

TEST_CASE("live: watch events add, update and remove nodes and pods, finished pods free their GPUs") {
  Fixture f;
  f.server.Put("nodes", NodeJson("n1", 8));
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));

  f.server.Put("nodes", NodeJson("n2", 4));
  CHECK(WaitFor([&] { return f.sink.nodes().count("n2") == 1; }));
  f.server.Put("pods", PodJson("ml", "a", "uid-a", 2, "n2", "0,1", "Running"));
  CHECK(WaitFor([&] { return f.sink.pods().count("uid-a") == 1; }));
  f.server.Put("pods", PodJson("ml", "a", "uid-a", 2, "n2", "0,1", "Succeeded"));
  CHECK(WaitFor([&] { return f.sink.pods().count("uid-a") == 0; }));

  f.server.Put("pods", PodJson("ml", "b", "uid-b", 1, "n1", "3", "Running"));
  CHECK(WaitFor([&] { return f.sink.pods().count("uid-b") == 1; }));
  f.server.Delete("pods", "ml/b");
  CHECK(WaitFor([&] { return f.sink.pods().empty(); }));
  f.server.Delete("nodes", "n2");
  CHECK(WaitFor([&] { return f.sink.nodes().count("n2") == 0; }));
  CHECK(f.server.lists("nodes") == 1);
}

TEST_CASE("live: ERROR 410 re-lists, and what the new list lacks leaves the sink") {
  Fixture f;
  f.server.Put("nodes", NodeJson("n1", 8));
  f.server.Put("nodes", NodeJson("n2", 8));
  f.server.Put("pods", PodJson("ml", "a", "uid-a", 2, "n1", "0,1", "Running"));
  f.server.Put("pods", PodJson("ml", "b", "uid-b", 2, "n2", "0,1", "Running"));
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready() && f.sink.pods().size() == 2; }));
  int node_lists = f.server.lists("nodes"), pod_lists = f.server.lists("pods");

  f.server.DeleteSilently("nodes", "n2");  // Lost with the compacted history.
  f.server.DeleteSilently("pods", "ml/b");
  f.server.Put("pods", PodJson("ml", "c", "uid-c", 1, "n1", "2", "Running"));
  f.server.CompactHistory();
  CHECK(WaitFor([&] { return f.server.lists("nodes") > node_lists && f.server.lists("pods") > pod_lists; }));
  CHECK(WaitFor([&] {
    auto pods = f.sink.pods();
    return f.sink.nodes().size() == 1 && pods.size() == 2 && pods.count("uid-a") && pods.count("uid-c");
  }));
  CHECK(f.sink.nodes().count("n1"));
  CHECK(live->node_reflector().lists() >= 2);
  CHECK(live->pod_reflector().lists() >= 2);
  CHECK(live->ready());
}

TEST_CASE("live: HTTP 410 on a watch re-lists") {
  Fixture f;
  f.server.Put("nodes", NodeJson("n1", 8));
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));
  // The next watch to connect may be any kind's (DRA's kinds are watched too).
  auto all_lists = [&] {
    int n = 0;
    for (const char* kind : {"nodes", "pods", "deviceclasses", "resourceslices", "resourceclaims"}) n += f.server.lists(kind);
    return n;
  };
  int lists = all_lists();
  f.server.NextWatchHttpGone();
  f.server.DropWatches();
  CHECK(WaitFor([&] { return all_lists() > lists; }));
  f.server.Put("nodes", NodeJson("n9", 8));
  CHECK(WaitFor([&] { return f.sink.nodes().count("n9") == 1; }));
}

TEST_CASE("live: a dropped stream reconnects from its resourceVersion without re-listing") {
  Fixture f;
  f.server.Put("nodes", NodeJson("n1", 8));
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));
  int watches = f.server.watches("nodes");
  for (int round = 0; round < 3; ++round) {
    f.server.DropWatches();
    f.server.Put("nodes", NodeJson("r" + std::to_string(round), 8));
    CHECK(WaitFor([&] { return f.sink.nodes().count("r" + std::to_string(round)) == 1; }));
  }
  CHECK(f.server.watches("nodes") > watches);
  CHECK(f.server.lists("nodes") == 1);
  CHECK(f.server.lists("pods") == 1);
}

TEST_CASE("live: watches end by timeout and resume, bookmarks keep the resourceVersion fresh") {
  Fixture f;
  f.server.Put("nodes", NodeJson("n1", 8));
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));
  // Each watch lasts 1-2 s (timeoutSeconds) and the server bookmarks every 100 ms when idle.
  CHECK(WaitFor([&] { return f.server.watches("pods") >= 3; }, std::chrono::milliseconds(8000)));
  CHECK(live->pod_reflector().events() > 5);
  CHECK(f.server.lists("pods") == 1);
}

TEST_CASE("live: a rotated token file is picked up when the watch reconnects") {
  Fixture f;
  f.server.Put("nodes", NodeJson("n1", 8));
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));
  f.server.SetTokens({"t2"});
  testing::WriteTempFile("live-token", "t2");
  f.server.DropWatches();
  f.server.Put("nodes", NodeJson("after-rotation", 8));
  CHECK(WaitFor([&] { return f.sink.nodes().count("after-rotation") == 1; }));
  CHECK(f.server.unauthorized() >= 1);
}

TEST_CASE("live: connected() and on_watch_state follow the API server while ready() stays") {
  Fixture f;
  f.server.Put("nodes", NodeJson("n1", 8));
  std::mutex mu;
  std::map<std::string, std::vector<bool>> states;  // kind -> every reported change, in order.
  LiveOptions o = f.Options();
  o.on_watch_state = [&](const std::string& kind, bool connected) {
    std::lock_guard<std::mutex> lock(mu);
    states[kind].push_back(connected);
  };
  auto last = [&](const std::string& kind) {
    std::lock_guard<std::mutex> lock(mu);
    return states.count(kind) && !states[kind].empty() ? std::optional<bool>(states[kind].back()) : std::nullopt;
  };
  auto started = LiveCluster::Start(o, f.sink);
  REQUIRE_MESSAGE(started.ok(), started.error());
  auto& live = *started;
  REQUIRE(WaitFor([&] { return live->ready() && live->connected(); }));
  CHECK(last("nodes") == true);
  CHECK(last("pods") == true);

  // The API server refuses us: both watches break, say so, and keep serving the last state.
  f.server.SetTokens({"other"});
  f.server.DropWatches();
  CHECK(WaitFor([&] { return last("nodes") == false && last("pods") == false; }));
  CHECK_FALSE(live->connected());
  CHECK_FALSE(live->node_reflector().connected());
  CHECK(live->ready());
  CHECK(f.sink.nodes().count("n1") == 1);

  // Accepted again: the new watches answer (the server bookmarks idle watches) and connect.
  f.server.SetTokens({"t1"});
  CHECK(WaitFor([&] { return live->connected() && last("nodes") == true && last("pods") == true; }));
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& [kind, changes] : states) {
    CAPTURE(kind);
    for (size_t i = 1; i < changes.size(); ++i) CHECK(changes[i] != changes[i - 1]);  // Changes only.
  }
}

TEST_CASE("live: Stop returns promptly while watches are open") {
  Fixture f;
  auto live = f.Start();
  REQUIRE(WaitFor([&] { return live->ready(); }));
  auto start = std::chrono::steady_clock::now();
  live->Stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1000));
}

TEST_CASE("live: configuration errors are returned at start") {
  RecordingSink sink;
  LiveOptions none;
  CHECK_FALSE(LiveCluster::Start(none, sink).ok());
  LiveOptions missing;
  missing.kubeconfig = "/nonexistent/kubeconfig";
  auto r = LiveCluster::Start(missing, sink);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("/nonexistent/kubeconfig") != std::string::npos);
}

}  // namespace
}  // namespace topofit::apiclient
