// hostile_load: `topofit serve --snapshot` on a large cluster, a well-behaved client sending filter and
// prioritize as kube-scheduler does, in quiet phases and in hostile phases where HostileTraffic
// (hostile_traffic.h) hits the server (issue 24, item 3).
//
//   build/bench/hostile_load --topofit build/extender/cli/topofit [--nodes 5000] [--rate 20]
//       [--rounds 3] [--quiet 20] [--hostile 20] [--ops 0|1] [--niced-attacker 0|1]
//       [--stalled 2000] [--slow 500] [--garbage 200] [--huge 100] [--bombs 50] [--explains 200]
//       [--reconnects 500] [--max-p99-ratio 2] [--p99-floor-ms 0] [--max-rss-ratio 2]
//
// --ops 0 (the default): the server listens on one port for everything (no --ops-listen) and the
// hostile clients share the listener, its reader thread and its workers with the verbs. --ops 1: as
// deployed (manifests/), the verbs on one loopback port and `--ops-listen` on another, where the
// hostile clients and a /healthz prober go (the extender port is loopback-only in a pod: other pods
// reach only the ops port). Its snapshot: `nodes` idle 8-GPU nodes (scale_cluster.h), so that filter
// keeps every node and prioritize scores them all. The good client (good_client.h) sends `rate` pods
// a second. Each round is a quiet phase, a hostile phase and, with --niced-attacker 1, a hostile phase
// whose attacker thread runs at nice 19 (HostileMix::nice: the same traffic asked for; an attacker in
// another pod does not take the server's CPU), so that the machine's other load falls on all alike.
// Reports, per phase kind: the good client's p50/p90/p99 of filter, prioritize and the pair over all
// rounds, and the p99 of each round with the median of the rounds' hostile/quiet ratios; its errors;
// the server's time in the verbs' handlers (topofit_request_duration_seconds) against the client's;
// /healthz's latency; the CPU of each thread name of the server and of this process
// (thread_cpu.h); the server's RSS (VmRSS every 100 ms: steady = the median of the first quiet phase,
// before any hostile traffic; peak = the most in any phase); what the hostile clients were answered;
// whether the server is still up (the same process, /healthz 200).
// Exit status 1 when the good client saw an error, the p99 of filter or prioritize over a hostile
// phase kind exceeds both max-p99-ratio times the quiet one and p99-floor-ms (a floor for machines
// whose scheduling noise alone moves a millisecond p99 by more than the ratio), the RSS peak exceeds
// max-rss-ratio times the steady RSS, or the server exited.
#include <fmt/format.h>
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/loadgen/child_process.h"
#include "bench/loadgen/good_client.h"
#include "bench/loadgen/hostile_report.h"
#include "bench/loadgen/hostile_traffic.h"
#include "bench/loadgen/raw_http_client.h"
#include "bench/loadgen/run_stats.h"
#include "bench/loadgen/thread_cpu.h"

namespace {

using namespace topofit;
using namespace topofit::bench::hostile;
using Clock = std::chrono::steady_clock;

// Where the phase is: `phase` -1 between phases (nothing is recorded).
struct Now {
  std::atomic<int> phase{-1}, round{0};
  std::atomic<bool> stop{false};
};

// The good client's loop: one pod every 1/rate s.
void RunGoodClient(int port, const Options& o, Samples& s, const Now& now) {
  pthread_setname_np(pthread_self(), "good-client");
  bench::GoodClient client(port, o.nodes);
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / o.rate));
  auto next = Clock::now();
  for (long k = 0; !now.stop.load(); ++k) {
    next += period;
    std::this_thread::sleep_until(next);
    const int phase = now.phase.load(), round = now.round.load();
    if (phase < 0) continue;
    double filter_ms = 0, prioritize_ms = 0;
    std::string error = client.Cycle(k, &filter_ms, &prioritize_ms);
    std::lock_guard<std::mutex> lock(s.mu);
    if (!error.empty()) {
      long seen = s.errors[kQuiet] + s.errors[kHostile] + s.errors[kNiced];
      if (seen < 10) std::fprintf(stderr, "good client, %s phase: %s\n", kPhaseNames[phase], error.c_str());
      ++s.errors[phase];
      continue;
    }
    s.filter[phase][round].push_back(filter_ms);
    s.prioritize[phase][round].push_back(prioritize_ms);
    s.cycle[phase][round].push_back(filter_ms + prioritize_ms);
  }
}

// kubelet's side: GET /healthz on the ops port every 100 ms.
void RunProber(int port, Samples& s, const Now& now) {
  pthread_setname_np(pthread_self(), "prober");
  bench::RawHttpClient c("127.0.0.1", port);
  c.set_drop_closed_idle(true);
  while (!now.stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const int phase = now.phase.load(), round = now.round.load();
    if (phase < 0) continue;
    auto t0 = Clock::now();
    int status = c.Send("GET", "/healthz", "");
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::lock_guard<std::mutex> lock(s.mu);
    if (status == 200) s.probe[phase][round].push_back(ms);
    else ++s.probe_errors[phase];
  }
}

bool ParseOptions(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], v = argv[i + 1];
    double x = std::atof(v.c_str());
    if (flag == "--topofit") o.topofit = v;
    else if (flag == "--dir") o.dir = v;
    else if (flag == "--nodes") o.nodes = int(x);
    else if (flag == "--rate") o.rate = x;
    else if (flag == "--rounds") o.rounds = int(x);
    else if (flag == "--quiet") o.quiet_s = x;
    else if (flag == "--hostile") o.hostile_s = x;
    else if (flag == "--ops") o.ops = x != 0;
    else if (flag == "--niced-attacker") o.niced = x != 0;
    else if (flag == "--stalled") o.mix.stalled = int(x);
    else if (flag == "--slow") o.mix.slow = int(x);
    else if (flag == "--garbage") o.mix.garbage_per_s = x;
    else if (flag == "--huge") o.mix.huge_per_s = x;
    else if (flag == "--bombs") o.mix.bomb_per_s = x;
    else if (flag == "--explains") o.mix.explain_per_s = x;
    else if (flag == "--reconnects") o.mix.reconnect_per_s = x;
    else if (flag == "--max-p99-ratio") o.max_p99_ratio = x;
    else if (flag == "--max-rss-ratio") o.max_rss_ratio = x;
    else if (flag == "--p99-floor-ms") o.p99_floor_ms = x;
    else return std::fprintf(stderr, "unknown flag %s\n", flag.c_str()), false;
  }
  if (o.topofit.empty() || o.nodes <= 0 || o.rate <= 0 || o.rounds <= 0)
    return std::fprintf(stderr, "usage: hostile_load --topofit PATH [--nodes N] [--rate R] [--rounds N] ...\n"), false;
  return true;
}

// The server under test and where it listens: `verbs` for the good client, `ops` for the rest (the
// same port without --ops).
struct Server {
  testing::TopofitProcess& process;
  int verbs = 0, ops = 0;
};

// topofit_request_duration_seconds' sum and count of filter and prioritize, from /metrics; false
// when /metrics did not answer (a Prometheus scrape that failed).
bool ScrapeHandlerTime(int port, double sum[2], double count[2]) {
  bench::RawHttpClient c("127.0.0.1", port);
  sum[0] = sum[1] = count[0] = count[1] = 0;
  if (c.Send("GET", "/metrics", "") != 200) return false;
  const std::string text(c.last_body());
  const char* verbs[2] = {"filter", "prioritize"};
  for (int v = 0; v < 2; ++v)
    for (auto [suffix, out] : {std::pair{"_sum", sum}, {"_count", count}}) {
      std::string key = fmt::format("topofit_request_duration_seconds{}{{verb=\"{}\"}} ", suffix, verbs[v]);
      if (size_t at = text.find(key); at != std::string::npos) out[v] = std::atof(text.c_str() + at + key.size());
    }
  return true;
}

// What a phase cost so far: CPU by thread and the handlers' time.
PhaseCost Reading(const Server& server) {
  PhaseCost c;
  c.server_cpu = bench::ThreadCpuSeconds(server.process.pid());
  c.loadgen_cpu = bench::ThreadCpuSeconds(getpid());
  c.scrapes_failed = ScrapeHandlerTime(server.ops, c.handler_s, c.handled) ? 0 : 1;
  return c;
}

void AddDifference(PhaseCost& total, const PhaseCost& before, const PhaseCost& after, double seconds) {
  total.seconds += seconds;
  auto add = [](std::map<std::string, double>& sum, const std::map<std::string, double>& from, const std::map<std::string, double>& to) {
    for (const auto& [name, cpu] : to) sum[name] += cpu - (from.count(name) ? from.at(name) : 0);
  };
  add(total.server_cpu, before.server_cpu, after.server_cpu);
  add(total.loadgen_cpu, before.loadgen_cpu, after.loadgen_cpu);
  total.scrapes_failed += before.scrapes_failed + after.scrapes_failed;
  if (before.scrapes_failed + after.scrapes_failed > 0) return;  // No handler time for this phase.
  for (int v = 0; v < 2; ++v) {
    total.handler_s[v] += after.handler_s[v] - before.handler_s[v];
    total.handled[v] += after.handled[v] - before.handled[v];
  }
}

// One phase of `seconds`: the RSS every 100 ms into its samples (and the steady ones when `steady`),
// its cost; false when the server exited.
bool RunPhase(const Server& server, Samples& s, Now& now, int phase, double seconds, bool steady) {
  const PhaseCost before = Reading(server);
  const auto start = Clock::now(), end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  now.phase.store(phase);
  bool alive = true;
  while (alive && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    alive = !server.process.Exited();
    long kb = bench::ProcStatusKb(server.process.pid(), "VmRSS");
    std::lock_guard<std::mutex> lock(s.mu);
    if (kb > 0) s.rss_kb[phase].push_back(kb);
    if (kb > 0 && steady) s.steady_kb.push_back(kb);
  }
  now.phase.store(-1);
  if (!alive) return false;
  AddDifference(s.cost[phase], before, Reading(server), std::chrono::duration<double>(Clock::now() - start).count());
  return true;
}

// A hostile phase of kind `phase`: the attack starts, its stalled connections pile up for 1 s, then
// the phase is measured; false when the server exited.
bool RunHostilePhase(const Options& o, const Server& server, Samples& s, Now& now, int phase) {
  bench::HostileMix mix = o.mix;
  mix.nice = phase == kNiced ? 19 : 0;
  bench::HostileTraffic hostile(server.ops, mix);
  hostile.Start();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  bool alive = RunPhase(server, s, now, phase, o.hostile_s, false);
  std::printf("round %d, %s: %ld stalled and slow connections open at the end; load average %s\n", now.round.load() + 1,
              kPhaseNames[phase], hostile.open_persistent(), bench::LoadAverage().c_str());
  std::fflush(stdout);
  hostile.Stop();
  for (const auto& [what, n] : hostile.Counts()) s.answered[phase][what] += n;
  std::this_thread::sleep_for(std::chrono::seconds(1));  // The hostile connections' ends settle.
  return alive;
}

// Quiet and hostile phases in turn; false when the server exited.
bool RunRounds(const Options& o, const Server& server, Samples& s, Now& now) {
  for (int r = 0; r < o.rounds; ++r) {
    now.round.store(r);
    std::printf("round %d, quiet: load average %s\n", r + 1, bench::LoadAverage().c_str());
    if (!RunPhase(server, s, now, kQuiet, o.quiet_s, r == 0)) return false;
    if (!RunHostilePhase(o, server, s, now, kHostile)) return false;
    if (o.niced && !RunHostilePhase(o, server, s, now, kNiced)) return false;
  }
  return true;
}

bool Healthy(int port) {
  bench::RawHttpClient c("127.0.0.1", port);
  return c.Send("GET", "/healthz", "") == 200;
}

// Starts `topofit serve` on a snapshot of `nodes` idle nodes; the ports, 0 when it did not start.
Server StartServer(const Options& o, testing::TopofitProcess*& process, const std::string& base) {
  std::vector<std::string> args{"--snapshot", base + ".json"};
  if (o.ops) args.insert(args.end(), {"--ops-listen", "127.0.0.1:0"});
  process = new testing::TopofitProcess(o.topofit, bench::ServeArgs(args), base + ".log");
  Server server{*process};
  server.verbs = process->WaitForLoggedPort("listen", std::chrono::seconds(120));
  server.ops = o.ops ? process->WaitForLoggedPort("ops", std::chrono::seconds(5)) : server.verbs;
  return server;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) return 2;
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;  // The server inherits it: its own cap must be what limits it.
  setrlimit(RLIMIT_NOFILE, &files);
  std::string base = o.dir + "/topofit-hostile-" + std::to_string(getpid());
  if (bench::WriteScaleSnapshot(base + ".json", o.nodes, 0) < 0) return std::fprintf(stderr, "cannot write %s.json\n", base.c_str()), 1;
  testing::TopofitProcess* process = nullptr;
  Server server = StartServer(o, process, base);
  std::unique_ptr<testing::TopofitProcess> owned(process);
  std::remove((base + ".json").c_str());
  if (server.verbs == 0 || server.ops == 0) return std::fprintf(stderr, "topofit serve did not start:\n%s\n", process->log().c_str()), 1;
  std::printf("hostile_load: %d idle nodes x 8 GPUs; good client %.0f pods/s (filter + prioritize); %d rounds of %.0f s quiet, "
              "%.0f s hostile%s; hostile: %d stalled, %d slow (1 byte / %.1f s), %.0f garbage/s, %.0f huge heads/s, %.0f bombs/s, "
              "%.0f explains/s, reconnects %.0f/s, on %s; server pid %d; load average %s\n",
              o.nodes, o.rate, o.rounds, o.quiet_s, o.hostile_s, o.niced ? " twice (the attacker at nice 0, then 19)" : "",
              o.mix.stalled, o.mix.slow, o.mix.slow_byte_s, o.mix.garbage_per_s, o.mix.huge_per_s, o.mix.bomb_per_s,
              o.mix.explain_per_s, o.mix.reconnect_per_s, o.ops ? "the ops port (--ops-listen)" : "the one port",
              int(process->pid()), bench::LoadAverage().c_str());
  std::fflush(stdout);

  Samples s(o.rounds);
  Now now;
  std::thread good([&] { RunGoodClient(server.verbs, o, s, now); });
  std::thread prober([&] { RunProber(server.ops, s, now); });
  bool alive = RunRounds(o, server, s, now);
  now.stop.store(true);
  good.join();
  prober.join();

  bool p99_within = PrintLatency(s, o);
  PrintRounds(s, o);
  PrintCost(s, o);
  double rss_ratio = PrintRss(s, process->pid());
  PrintHostile(s, o);
  alive = alive && !process->Exited() && Healthy(server.ops);
  std::printf("server: %s; load average at the end %s\n", alive ? "the same process, /healthz 200" : "EXITED or not answering",
              bench::LoadAverage().c_str());
  long errors = s.errors[kQuiet] + s.errors[kHostile] + s.errors[kNiced];
  bool pass = alive && errors == 0 && p99_within && rss_ratio <= o.max_rss_ratio;
  std::printf("%s (bounds: no error; p99 within %.2fx of quiet or %.0f ms; RSS within %.2fx)\n", pass ? "PASS" : "FAIL",
              o.max_p99_ratio, o.p99_floor_ms, o.max_rss_ratio);
  return pass ? 0 : 1;
}
