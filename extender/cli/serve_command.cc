// `topofit serve`: the kube-scheduler extender over HTTP. Cluster source: the API server (--kubeconfig,
// --in-cluster: list + watch), else --snapshot FILE (what `kubectl get nodes,pods -A -o json|yaml`
// prints), else the embedded demo cluster.
#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>

#include "base/log.h"
#include "extender/apiclient/model_sink.h"
#include "extender/cli/command.h"
#include "extender/k8s/demo_cluster.h"
#include "extender/k8s/snapshot.h"
#include "extender/server/extender_app.h"

namespace topofit::cli {
namespace {

struct ServeFlags {
  std::string listen = "0.0.0.0:8888";
  std::string ops_listen;  // "": health, metrics and the query API share --listen.
  std::string url_prefix;
  std::string snapshot;
  std::string record;
  std::string config;
  size_t max_body_bytes = 0;
  int threads = 0;
  std::string kubeconfig;  // Live mode (extender/apiclient): list+watch the API server, bind through it.
  std::string context;
  bool in_cluster = false;
  bool filter_keeps_best = false;
  std::string tls_cert_file;  // HTTPS on --listen (server/tls_credentials.h).
  std::string tls_private_key_file;
  std::string client_ca_file;
  double kube_api_qps = apiclient::ApiClientOptions{}.qps;
  int kube_api_burst = apiclient::ApiClientOptions{}.burst;
  int kube_api_list_limit = apiclient::LiveOptions{}.page_size;
};

// SIGTERM/SIGINT only write a byte here (async-signal-safe); the main thread does the shutdown.
int g_signal_pipe[2] = {-1, -1};

void OnSignal(int) {
  char c = 1;
  ssize_t ignored = write(g_signal_pipe[1], &c, 1);
  (void)ignored;
}

// How long a SIGTERM waits for running calls (a bind's API writes) before exiting anyway; well
// inside Kubernetes' default 30 s termination grace period.
constexpr std::chrono::seconds kDrain{10};

void PrintTryIt(const server::ServeConfig& cfg, int port) {
  std::string host = cfg.server.host == "0.0.0.0" || cfg.server.host.empty() ? "127.0.0.1" : cfg.server.host;
  std::string base = fmt::format("http://{}:{}", host, port);
  std::printf(
      "topofit serve: extender at %s%s/{filter,prioritize,bind,preempt}, running on the embedded demo cluster\n"
      "(5 nodes: dgx-v100-1, dgx-v100-2, a100-1, pcie-1, pcie-4x-1; 36 GPUs). Try it:\n\n"
      "  curl -s %s%s/filter -d '{\"Pod\":{\"metadata\":{\"name\":\"train\",\"namespace\":\"ml\",\"uid\":\"u-1\"},"
      "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]}},"
      "\"Nodes\":null,\"NodeNames\":[\"dgx-v100-1\",\"dgx-v100-2\",\"a100-1\",\"pcie-1\",\"pcie-4x-1\"]}'\n\n"
      "  curl -s %s/api/v1/explain -H 'Content-Type: application/yaml' --data-binary $'metadata: {name: train, "
      "namespace: ml}\\nspec:\\n  containers:\\n  - resources: {limits: {nvidia.com/gpu: 4}}\\n'\n\n"
      "  curl -s %s/api/v1/nodes     curl -s %s/metrics\n\n",
      base.c_str(), cfg.server.url_prefix.c_str(), base.c_str(), cfg.server.url_prefix.c_str(), base.c_str(),
      base.c_str(), base.c_str());
  std::fflush(stdout);
}

int RunServe(const ServeFlags& flags, CLI::App& sub) {
  server::ServeConfig cfg;
  if (!flags.config.empty()) {
    Status s = server::ApplyConfigFile(flags.config, cfg);
    if (!s.ok()) {
      Log(LogLevel::kError, "cannot serve", {{"error", s.error()}});
      return 2;
    }
  }
  // Flags given on the command line win over the config file.
  if (sub.count("--listen") || flags.config.empty()) {
    Status s = server::ParseListen(flags.listen, cfg.server);
    if (!s.ok()) {
      Log(LogLevel::kError, "cannot serve", {{"error", s.error()}});
      return 2;
    }
  }
  if (sub.count("--ops-listen")) {
    Status s = server::ParseOpsListen(flags.ops_listen, cfg.server);
    if (!s.ok()) {
      Log(LogLevel::kError, "cannot serve", {{"error", s.error()}});
      return 2;
    }
  }
  if (!flags.url_prefix.empty()) cfg.server.url_prefix = flags.url_prefix;
  if (flags.max_body_bytes) cfg.server.max_body_bytes = flags.max_body_bytes;
  if (flags.threads) cfg.server.threads = flags.threads;
  if (sub.count("--filter-keeps-best")) cfg.pipeline.filter_keeps_best = flags.filter_keeps_best;
  if (sub.count("--tls-cert-file")) cfg.server.tls.cert_file = flags.tls_cert_file;
  if (sub.count("--tls-private-key-file")) cfg.server.tls.key_file = flags.tls_private_key_file;
  if (sub.count("--client-ca-file")) cfg.server.tls.client_ca_file = flags.client_ca_file;

  // Live mode: --kubeconfig, --in-cluster, or in a pod (KUBERNETES_SERVICE_HOST) without --snapshot.
  apiclient::LiveOptions live;
  live.kubeconfig = flags.kubeconfig;
  live.context = flags.context;
  live.api.qps = flags.kube_api_qps;
  live.api.burst = flags.kube_api_burst;
  live.page_size = flags.kube_api_list_limit;
  live.in_cluster = flags.in_cluster || (flags.kubeconfig.empty() && flags.snapshot.empty() &&
                                         std::getenv("KUBERNETES_SERVICE_HOST"));
  std::shared_ptr<apiclient::ApiClient> api;
  if (!live.kubeconfig.empty() || live.in_cluster) {
    auto connected = apiclient::ConnectApi(live);
    if (!connected) {
      Log(LogLevel::kError, "cannot serve", {{"error", connected.error()}});
      return 2;
    }
    api = *connected;
  }
  auto app = server::ExtenderApp::Create(cfg, flags.record, api ? std::make_unique<apiclient::ApiWriter>(api) : nullptr);
  if (!app) {
    Log(LogLevel::kError, "cannot serve", {{"error", app.error()}});
    return 2;
  }
  server::ExtenderApp& a = **app;
  // Snapshot mode: the file streams into the model (the demo cluster is small and compiled in).
  server::ExtenderApp::Loaded loaded;
  if (!api && flags.snapshot.empty()) {
    auto demo = k8s::LoadDemoCluster();
    if (!demo) {
      Log(LogLevel::kError, "cannot serve", {{"error", demo.error()}});
      return 2;
    }
    a.Load(*demo);
    loaded = {demo->nodes.size(), demo->pods.size()};
  } else if (!api) {
    auto from_file = a.LoadFile(flags.snapshot);
    if (!from_file) {
      Log(LogLevel::kError, "cannot serve", {{"error", from_file.error()}});
      return 2;
    }
    loaded = *from_file;
  }
  Status bound = a.server().Bind();
  if (!bound.ok()) {
    Log(LogLevel::kError, "cannot serve", {{"error", bound.error()}});
    return 1;
  }
  std::unique_ptr<apiclient::LiveCluster> watch;  // Declared after the app: stops before the model goes.
  if (api) {
    live.on_ready = [&a] { a.server().SetReady(true); };
    live.on_watch_state = [&a](const std::string& kind, bool connected) { a.metrics().SetWatchConnected(kind, connected); };
    auto requeue = [&a](const cluster::WaitingPod& pod, const std::string& node) {
      a.writer().RequeuePod(pod.namespace_, pod.name, pod.uid);
      a.metrics().CountRequeue();
      Log(LogLevel::kInfo, "requeue pod", {{"pod", pod.namespace_ + "/" + pod.name}, {"gpus", std::to_string(pod.gpus)},
                                          {"node", node}, {"why", "GPUs freed on a node that turned it away"}});
    };
    watch = apiclient::StartLiveCluster(live, api, a.model(), requeue);
  }
  Log(LogLevel::kInfo, "serving",
      {{"listen", fmt::format("{}:{}", cfg.server.host, a.server().port())},
       {"tls", !cfg.server.tls.enabled() ? "off" : cfg.server.tls.client_ca_file.empty() ? "on" : "on, client certificates required"},
       {"ops", fmt::format("{}:{}", cfg.server.ops_port >= 0 ? cfg.server.ops_host : cfg.server.host, a.server().ops_port())},
       {"prefix", cfg.server.url_prefix},
       {"nodes", std::to_string(loaded.nodes)},
       {"pods", std::to_string(loaded.pods)},
       {"source", api ? api->config().server : flags.snapshot.empty() ? "demo" : flags.snapshot}});
  if (!api && flags.snapshot.empty() && !cfg.server.tls.enabled()) PrintTryIt(cfg, a.server().port());
  if (pipe(g_signal_pipe) != 0) {
    Log(LogLevel::kError, "cannot serve", {{"error", "cannot create the signal pipe"}});
    return 1;
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  if (Status started = a.server().Start(); !started.ok()) {
    Log(LogLevel::kError, "cannot serve", {{"error", started.error()}});
    return 1;
  }
  char c;
  while (read(g_signal_pipe[0], &c, 1) < 0 && errno == EINTR) {
  }
  Log(LogLevel::kInfo, "shutting down", {{"in_flight", std::to_string(a.server().in_flight())}});
  bool drained = a.server().Shutdown(kDrain);
  if (drained) Log(LogLevel::kInfo, "stopped");
  else Log(LogLevel::kWarn, "stopped with calls still running after the drain period");
  // Exit without destroying anything: a handler past the drain period may still be running, and the
  // watch's threads need no orderly goodbye. Stdio (the --record file, logs) is flushed first.
  std::fflush(nullptr);
  std::_Exit(drained ? 0 : 1);
}

}  // namespace

CommandRun SetupServe(CLI::App& sub) {
  auto flags = std::make_shared<ServeFlags>();
  sub.add_option("--listen", flags->listen, "ADDR:PORT to listen on")->capture_default_str();
  sub.add_option("--ops-listen", flags->ops_listen,
                 "ADDR:PORT for /healthz, /readyz, /metrics and /api/v1 on their own listener, so --listen "
                 "(the verbs) can stay on 127.0.0.1 beside kube-scheduler");
  sub.add_option("--url-prefix", flags->url_prefix, "Path prefix of the verbs (default /scheduler)");
  sub.add_option("--snapshot", flags->snapshot,
                 "Cluster snapshot: `kubectl get nodes,pods -A -o json` (or -o yaml) output; "
                 "default: the embedded demo cluster");
  sub.add_option("--record", flags->record, "Append every verb request and reply to FILE as JSON lines");
  sub.add_option("--config", flags->config, "YAML config: weights, request mix, reservation TTL, body limit...");
  sub.add_option("--max-body-bytes", flags->max_body_bytes, "Largest request body accepted (default 64 MiB)");
  sub.add_option("--threads", flags->threads, "HTTP worker threads (default max(32, 4 x cores))");
  sub.add_option("--kubeconfig", flags->kubeconfig, "Live mode: watch and bind through the API server of this kubeconfig");
  sub.add_option("--context", flags->context, "kubeconfig context (default: current-context)");
  sub.add_option("--kube-api-qps", flags->kube_api_qps,
                 "Requests per second to the API server (binds, lists, watches); 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub.add_option("--kube-api-burst", flags->kube_api_burst, "Requests allowed at once above --kube-api-qps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub.add_option("--kube-api-list-limit", flags->kube_api_list_limit,
                 "Objects per page when listing nodes and pods (`limit`, followed by `continue`, as client-go "
                 "lists); 0: one unpaged list")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub.add_flag("--filter-keeps-best", flags->filter_keeps_best,
               "Filter passes only the best-scored nodes, so kube-scheduler needs no prioritizeVerb "
               "(config: filterKeepsBest; --filter-keeps-best=false turns it off)");
  sub.add_option("--tls-cert-file", flags->tls_cert_file,
                 "Serve HTTPS on --listen with this PEM certificate (chain); reloaded when the file changes "
                 "(config: tlsCertFile). --ops-listen stays plain HTTP");
  sub.add_option("--tls-private-key-file", flags->tls_private_key_file,
                 "PEM private key of --tls-cert-file (config: tlsPrivateKeyFile)");
  sub.add_option("--client-ca-file", flags->client_ca_file,
                 "Require a client certificate signed by a CA in this PEM bundle on --listen (config: clientCAFile)");
  sub.add_flag("--in-cluster", flags->in_cluster,
               "Live mode with the pod's service account (default when KUBERNETES_SERVICE_HOST is set and no --snapshot)");
  return [flags, &sub] { return RunServe(*flags, sub); };
}

}  // namespace topofit::cli
