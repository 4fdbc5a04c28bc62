// memory_bench: the memory of `topofit serve` loading a large cluster, from a snapshot file and from
// an API server's first list.
//
//   build/bench/memory_bench --topofit build/extender/cli/topofit [--nodes 10000] [--pods 100000]
//                            [--page-size 500] [--only snapshot|live] [--dir DIR]
//
// Writes the cluster (scale_cluster.h) as a kubectl List, then runs `topofit serve --snapshot FILE`
// and, for the live path, `topofit serve --kubeconfig` against a small HTTPS list server of this
// process that serves the same objects as a NodeList and a PodList, paged by `limit`/`continue`
// (continue = the offset), and holds watches open without events. For each: the time until
// /readyz answers 200, the peak resident size while loading (VmHWM) and the resident size once
// loaded (VmRSS), from /proc of the server process.
#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/loadgen/child_process.h"
#include "bench/loadgen/scale_cluster.h"
#include "extender/apiclient/testing/test_pki.h"

namespace {

using namespace topofit;
using Clock = std::chrono::steady_clock;

struct Measured {
  bool ok = false;
  double ready_s = 0;
  long hwm_kb = 0, rss_kb = 0;
};

// Waits for /readyz (a 503 until the model is loaded), then reads the process's memory.
Measured MeasureUntilReady(testing::TopofitProcess& serve, std::chrono::seconds timeout) {
  Measured m;
  auto start = Clock::now();
  int port = serve.WaitForLoggedPort("listen", timeout);
  if (port == 0) {
    std::fprintf(stderr, "topofit serve did not start:\n%s\n", serve.log().c_str());
    return m;
  }
  httplib::Client c("127.0.0.1", port);
  while (Clock::now() - start < timeout) {
    auto res = c.Get("/readyz");
    if (res && res->status == 200) {
      m.ready_s = std::chrono::duration<double>(Clock::now() - start).count();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // Let the load's last frees settle.
      m.hwm_kb = bench::ProcStatusKb(serve.pid(), "VmHWM");
      m.rss_kb = bench::ProcStatusKb(serve.pid(), "VmRSS");
      m.ok = m.hwm_kb > 0;
      return m;
    }
    if (serve.Exited()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::fprintf(stderr, "topofit serve did not become ready:\n%s\n", serve.log().c_str());
  return m;
}

// The list server: NodeList and PodList pages of pre-built items; watches stay open, silent.
class ListServer {
 public:
  ListServer(std::vector<std::string> nodes, std::vector<std::string> pods)
      : nodes_(std::move(nodes)), pods_(std::move(pods)) {
    const auto& pki = apiclient::testing::GetTestPki();
    std::string cert = apiclient::testing::WriteTempFile("list-server.crt", pki.server_cert_pem);
    std::string key = apiclient::testing::WriteTempFile("list-server.key", pki.server_key_pem);
    server_ = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
    server_->Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
      Serve(req, res, nodes_, "NodeList");
    });
    server_->Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      Serve(req, res, pods_, "PodList");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ListServer() {
    stopping_ = true;
    server_->stop();
    thread_.join();
  }
  int port() const { return port_; }
  int pages() const { return pages_.load(); }

 private:
  void Serve(const httplib::Request& req, httplib::Response& res, const std::vector<std::string>& items,
             const char* kind) {
    if (req.has_param("watch")) {
      int timeout = req.has_param("timeoutSeconds") ? std::stoi(req.get_param_value("timeoutSeconds")) : 60;
      auto deadline = Clock::now() + std::chrono::seconds(timeout);
      res.set_chunked_content_provider("application/json", [this, deadline](size_t, httplib::DataSink& sink) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (stopping_ || Clock::now() > deadline) sink.done();
        return true;
      });
      return;
    }
    ++pages_;
    size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
    size_t from = req.has_param("continue") ? std::stoul(req.get_param_value("continue")) : 0;
    size_t to = limit ? std::min(items.size(), from + limit) : items.size();
    std::string body = fmt::format(R"({{"kind":"{}","apiVersion":"v1","metadata":{{"resourceVersion":"5000"{}}},"items":[)",
                                   kind, to < items.size() ? fmt::format(R"(,"continue":"{}")", to) : "");
    for (size_t i = from; i < to; ++i) {
      if (i > from) body += ',';
      body += items[i];
    }
    body += "]}";
    res.set_content(std::move(body), "application/json");
  }

  std::vector<std::string> nodes_, pods_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> pages_{0};
};

void Print(const char* what, const Measured& m) {
  std::printf("%-9s ready in %6.1f s   peak RSS (VmHWM) %6.1f MiB   RSS once loaded %6.1f MiB\n", what, m.ready_s,
              m.hwm_kb / 1024.0, m.rss_kb / 1024.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string topofit, only, dir = "/tmp";
  int nodes = 10000, pods = 100000, page_size = 500;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--topofit") topofit = value;
    else if (flag == "--nodes") nodes = std::atoi(value.c_str());
    else if (flag == "--pods") pods = std::atoi(value.c_str());
    else if (flag == "--page-size") page_size = std::atoi(value.c_str());
    else if (flag == "--only") only = value;
    else if (flag == "--dir") dir = value;
    else return std::fprintf(stderr, "unknown flag %s\n", flag.c_str()), 2;
  }
  if (topofit.empty() || nodes <= 0) return std::fprintf(stderr, "usage: memory_bench --topofit PATH [--nodes N] [--pods N]\n"), 2;
  std::string snapshot = dir + "/topofit-memory-bench.json";
  int failures = 0;

  if (only.empty() || only == "snapshot") {
    long size = bench::WriteScaleSnapshot(snapshot, nodes, pods);
    if (size < 0) return std::fprintf(stderr, "cannot write %s\n", snapshot.c_str()), 1;
    std::printf("memory_bench: %d nodes x 8 GPUs, %d pods; snapshot %.1f MB\n", nodes, pods, size / 1e6);
    testing::TopofitProcess serve(topofit, bench::ServeArgs({"--snapshot", snapshot}), dir + "/topofit-memory-bench-snapshot.log");
    Measured m = MeasureUntilReady(serve, std::chrono::seconds(600));
    if (m.ok) Print("snapshot", m);
    else ++failures;
    std::remove(snapshot.c_str());
  }
  if (only.empty() || only == "live") {
    std::vector<std::string> node_items, pod_items;
    for (int i = 0; i < nodes; ++i) node_items.push_back(k8s::testing::RealisticNode(i));
    for (int i = 0; i < pods; ++i) pod_items.push_back(bench::ScalePodJson(i, nodes));
    ListServer list(std::move(node_items), std::move(pod_items));
    std::string kubeconfig = apiclient::testing::WriteTempFile(
        "memory-bench.kubeconfig",
        apiclient::testing::KubeconfigYaml("https://127.0.0.1:" + std::to_string(list.port()),
                                           apiclient::testing::GetTestPki().ca_pem, "    token: bench\n"));
    std::vector<std::string> args{"--kubeconfig", kubeconfig};
    if (page_size != 500) args.insert(args.end(), {"--kube-api-list-limit", std::to_string(page_size)});
    testing::TopofitProcess serve(topofit, bench::ServeArgs(args), dir + "/topofit-memory-bench-live.log");
    Measured m = MeasureUntilReady(serve, std::chrono::seconds(600));
    if (m.ok) {
      Print("live", m);
      std::printf("          (%d list pages of at most %d objects)\n", list.pages(), page_size);
    } else {
      ++failures;
    }
  }
  return failures ? 1 : 0;
}
