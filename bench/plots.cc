#include "bench/plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

namespace topofit::bench {
namespace {

bool HaveGnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// Allocation curves: one column block per policy.
std::string AllocationData(const std::vector<PolicySummary>& rows) {
  std::string curve = "# x allocated_pct, one block per policy (gnuplot index)\n";
  for (const auto& r : rows) {
    curve += "# " + r.policy + "\n";
    for (const auto& p : r.curve) curve += fmt::format("{:.3f} {:.4f}\n", p.x, p.allocated_pct);
    curve += "\n\n";
  }
  return curve;
}

// The GPU counts of the multi-GPU pods placed, ascending.
std::vector<int> MultiGpuSizes(const std::vector<PolicySummary>& rows) {
  std::vector<int> sizes;
  for (const auto& r : rows)
    for (const auto& m : r.multi)
      if (std::find(sizes.begin(), sizes.end(), m.gpus) == sizes.end()) sizes.push_back(m.gpus);
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

// Bandwidth by GPU count: mean set bandwidth and mean cluster-best per (policy, k).
std::string BandwidthData(const std::vector<PolicySummary>& rows, const std::vector<int>& sizes) {
  std::string bw = "# policy";
  for (int k : sizes) bw += fmt::format(" k{}_gbps", k);
  bw += " all_multi_gpu_gbps\n";
  for (const auto& r : rows) {
    bw += r.policy;
    for (int k : sizes) {
      double sum = 0;
      int n = 0;
      for (const auto& m : r.multi)
        if (m.gpus == k) sum += m.bandwidth_gbps, ++n;
      bw += fmt::format(" {:.3f}", n ? sum / n : 0.0);
    }
    bw += fmt::format(" {:.3f}\n", r.multi_gpu_mean_bandwidth_gbps);
  }
  return bw;
}

// The allocation plot: the paper protocol's has a zoomed right panel.
std::string AllocationScript(const std::string& stem, const ReportContext& ctx, const std::vector<PolicySummary>& rows) {
  const bool paper = ctx.mode == "paper";
  std::string gp = "set terminal pngcairo size 1300,600 font 'DejaVu Sans,10' noenhanced\n";
  gp += "set output " + Quote(stem + "-allocation.png") + "\n";
  gp += "set grid\nset key left top box opaque\n";
  if (paper) gp += "set multiplot layout 1,2\n";
  if (paper) {
    gp += "set title " + Quote(fmt::format("{}: GPUs allocated as pods arrive (mean of {} seeds)",
                                           ctx.trace, rows.empty() ? 0 : rows.front().runs)) + "\n";
    gp += "set xlabel 'arrived GPU request (% of cluster GPUs)'\nset ylabel 'GPUs allocated (% of cluster GPUs)'\n";
    gp += "set xrange [0:130]\nset yrange [0:105]\n";
    gp += "set arrow from 100, graph 0 to 100, graph 1 nohead dt 3 lc rgb 'gray40'\n";
  } else {
    gp += "set title " + Quote(ctx.trace + ": GPU allocation over time (time-ordered replay)") + "\n";
    gp += "set xlabel " + Quote(ctx.x_label) + "\nset ylabel 'GPUs allocated (% of cluster GPUs)'\n";
  }
  std::string plot = "plot ";
  if (paper) plot += "x title 'ideal: every GPU requested is allocated' dt 2 lc rgb 'gray50' lw 1, ";
  for (size_t i = 0; i < rows.size(); ++i) {
    plot += fmt::format("{} index {} using 1:2 with lines lw {} title {}{}", Quote(stem + "-allocation.dat"), i,
                        rows[i].policy.starts_with("topofit") ? 3 : 1.5, Quote(rows[i].policy), i + 1 < rows.size() ? ", " : "\n");
  }
  gp += plot;
  if (paper) {
    // Right panel: the end of the run, where the policies part ways (replot does not work in multiplot).
    gp += "set title 'zoom on 80-130% arrived'\nset xrange [80:130]\nset yrange [90:100]\nset key right bottom box opaque\n";
    gp += plot + "unset multiplot\n";
  }
  return gp;
}

// The bandwidth histogram: one cluster of bars per policy, one bar per GPU count and the mean.
std::string BandwidthScript(const std::string& stem, const ReportContext& ctx, const std::vector<int>& sizes) {
  std::string gp = "set output " + Quote(stem + "-bandwidth.png") + "\n";
  gp += "set title " + Quote(ctx.trace + ": predicted ring all-reduce bandwidth of the GPU sets given to multi-GPU pods") + "\n";
  gp += "unset arrow\nset key outside top center horizontal\nset style data histograms\nset style histogram clustered gap 1\n";
  gp += "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset xtics rotate by -25\n";
  gp += "set xlabel ''\nset ylabel 'mean bandwidth (GB/s per direction)'\nset autoscale x\nset yrange [0:*]\n";
  gp += "plot ";
  std::string dat = Quote(stem + "-bandwidth.dat");
  for (size_t j = 0; j < sizes.size(); ++j) {
    gp += fmt::format("{} using {}:xtic(1) title {}, ", dat, j + 2, Quote(fmt::format("{}-GPU pods", sizes[j])));
  }
  gp += fmt::format("{} using {} title 'all multi-GPU pods (mean)' lc rgb 'gray40'\n", dat, sizes.size() + 2);
  return gp;
}

}  // namespace

Result<std::vector<std::string>> WritePlots(const std::string& dir, const ReportContext& ctx,
                                            const std::vector<PolicySummary>& rows) {
  if (!HaveGnuplot()) return Error{"gnuplot not found; install it with `scripts/install-deps.sh plots`"};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{"cannot create " + dir + ": " + ec.message()};
  const std::string stem = dir + "/" + ctx.trace;
  if (auto st = WriteTextFile(stem + "-allocation.dat", AllocationData(rows)); !st) return Error{st.error()};
  const std::vector<int> sizes = MultiGpuSizes(rows);
  if (auto st = WriteTextFile(stem + "-bandwidth.dat", BandwidthData(rows, sizes)); !st) return Error{st.error()};
  // No multi-GPU pod placed: draw only the allocation plot.
  std::string gp = AllocationScript(stem, ctx, rows) + (sizes.empty() ? "" : BandwidthScript(stem, ctx, sizes));
  if (auto st = WriteTextFile(stem + ".gp", gp); !st) return Error{st.error()};
  std::string cmd = "gnuplot " + Quote(stem + ".gp") + " 2>" + Quote(stem + ".gnuplot.log");
  if (std::system(cmd.c_str()) != 0) return Error{"gnuplot failed; see " + stem + ".gnuplot.log"};
  std::vector<std::string> out{stem + "-allocation.png"};
  if (!sizes.empty()) out.push_back(stem + "-bandwidth.png");
  return out;
}

}  // namespace topofit::bench
