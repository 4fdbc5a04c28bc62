#pragma once
// hostile_load's measurements (hostile_load.cc says what it runs) and the tables it prints from them:
// per phase kind (quiet; hostile; hostile with the attacker at nice 19), the good client's latency
// over all rounds and by round, the server's handler time against the client's, CPU by thread name,
// RSS, and what the hostile clients were answered. Samples is filled under its mutex by the client
// threads; the Print functions run after they have stopped.

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bench/loadgen/hostile_traffic.h"

namespace topofit::bench::hostile {

struct Options {
  std::string topofit, dir = "/tmp";
  int nodes = 5000, rounds = 3;
  double rate = 20, quiet_s = 20, hostile_s = 20, max_p99_ratio = 2, max_rss_ratio = 2, p99_floor_ms = 0;
  bool ops = false, niced = false;
  HostileMix mix;
};

enum Phase { kQuiet, kHostile, kNiced, kPhases };
inline const char* kPhaseNames[kPhases] = {"quiet", "hostile", "hostile, attacker nice 19"};

// Milliseconds by round.
using ByRound = std::vector<std::vector<double>>;

// Every round's samples in one.
std::vector<double> Pooled(const ByRound& v);

// What one phase kind cost, summed over its phases.
struct PhaseCost {
  double seconds = 0;
  std::map<std::string, double> server_cpu, loadgen_cpu;  // CPU seconds by thread name.
  // filter, prioritize: the server's handler seconds and count, over the phases whose /metrics
  // scrapes at both ends answered; the scrapes that did not.
  double handler_s[2] = {}, handled[2] = {};
  int scrapes_failed = 0;
};

// The measurements, by phase kind.
struct Samples {
  explicit Samples(int rounds) {
    for (auto* v : {filter, prioritize, cycle, probe})
      for (int p = 0; p < kPhases; ++p) v[p].resize(rounds);
  }
  std::mutex mu;
  ByRound filter[kPhases], prioritize[kPhases], cycle[kPhases], probe[kPhases];
  long errors[kPhases] = {}, probe_errors[kPhases] = {};
  std::vector<long> rss_kb[kPhases];
  std::vector<long> steady_kb;  // The first quiet phase's: before any hostile traffic.
  PhaseCost cost[kPhases];
  std::map<std::string, long> answered[kPhases];
};


// The phase kinds this run has.
inline int Kinds(const Options& o) { return o.niced ? kPhases : kNiced; }

// The good client's latency over all rounds; whether every hostile kind's p99 of filter and of
// prioritize is within max(max_p99_ratio x quiet, p99_floor_ms).
bool PrintLatency(Samples& s, const Options& o);
// Each round's p99, and the median over rounds of the hostile / quiet ratios.
void PrintRounds(Samples& s, const Options& o);
// The handlers' time against the client's, and CPU by thread name.
void PrintCost(Samples& s, const Options& o);
// The RSS line; peak / steady.
double PrintRss(Samples& s, pid_t pid);
void PrintHostile(Samples& s, const Options& o);

}  // namespace topofit::bench::hostile
