// Tables of a scaling study (see scaling_report.h).
#include "scaling/scaling_report.h"

#include <cstdio>
#include <filesystem>

namespace hlm {
namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

double num(const nlohmann::json& j, const char* key) { return j.value(key, 0.0); }

std::string ms(double seconds) { return fmt("%.1f", seconds * 1e3); }

// "median (min-max)" of a spread.
std::string spread_text(const nlohmann::json& spread) {
  return fmt("%.3f", spread.at("median")) + " (" + fmt("%.3f", spread.at("min")) + "-" +
         fmt("%.3f", spread.at("max")) + ")";
}

std::string measured_table(const nlohmann::json& study) {
  std::string md =
      "| point | steps/rank | time s: median (range) | tokens/s | speedup | efficiency | "
      "overhead s | step E | ceiling | E / ceiling | step E / ceiling: median (range) | forward ms "
      "| backward ms | "
      "optimizer ms | data ms | all-reduce ms | MFU |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& p : study.at("points")) {
    const auto& s = p.at("seconds");
    const auto& ph = p.at("phases");
    md +=
        "| " + p.at("label").get<std::string>() + " | " + p.at("steps_per_rank").dump() + " | " +
        fmt("%.2f", s.at("median")) + " (" + fmt("%.2f", s.at("min")) + "-" +
        fmt("%.2f", s.at("max")) + ") | " + fmt("%.0f", p.at("tokens_per_s").at("median")) + " | " +
        fmt("%.2f", num(p, "speedup")) + " | " + fmt("%.3f", num(p, "efficiency")) + " | " +
        fmt("%.2f", num(p, "overhead_seconds")) + " | " + fmt("%.3f", num(p, "step_efficiency")) +
        " | " + (p.contains("ceiling") ? fmt("%.3f", p.at("ceiling")) : "-") + " | " +
        (p.contains("efficiency_vs_ceiling") ? fmt("%.3f", p.at("efficiency_vs_ceiling")) : "-") +
        " | " +
        (p.contains("step_efficiency_vs_ceiling") ? spread_text(p.at("step_efficiency_vs_ceiling"))
                                                  : "-") +
        " | " + ms(ph.at("forward")) + " | " + ms(ph.at("backward")) + " | " +
        ms(ph.at("optimizer")) + " | " + ms(ph.at("data_wait")) + " | " + ms(ph.at("allreduce")) +
        " | " + fmt("%.3f", p.at("mfu")) + " |\n";
  }
  return md;
}

std::string prediction_table(const nlohmann::json& study) {
  std::string md =
      "| point | step E measured | step E predicted | error | exposed all-reduce ms | "
      "straggler ms | data ms | bottleneck | fix |\n|---|---|---|---|---|---|---|---|---|\n";
  bool any = false;
  for (const auto& p : study.at("points")) {
    if (!p.contains("predicted")) continue;
    any = true;
    const auto& pr = p.at("predicted");
    md += "| " + p.at("label").get<std::string>() + " | " + fmt("%.3f", num(p, "step_efficiency")) +
          " | " + fmt("%.3f", pr.at("efficiency")) + " | " +
          fmt("%+.1f %%", 100 * pr.at("error").get<double>()) +
          (pr.at("calibration").get<bool>() ? " (calibration)" : "") + " | " +
          ms(pr.at("communication_seconds")) + " | " + ms(pr.at("straggler_seconds")) + " | " +
          ms(pr.at("data_seconds")) + " | " + pr.at("bottleneck").get<std::string>() + " | " +
          pr.at("fix").get<std::string>() + " |\n";
  }
  return any ? md : "No multi-rank point was measured: nothing to predict.\n";
}

std::string fabric_table(const nlohmann::json& study) {
  std::string md;
  for (const auto& p : study.at("points")) {
    if (p.at("fabric").is_null()) continue;
    if (md.empty())
      md = "| point | backend | bandwidth GB/s | latency us | overlap |\n|---|---|---|---|---|\n";
    const auto& f = p.at("fabric");
    md += "| " + p.at("label").get<std::string>() + " | " + f.at("name").get<std::string>() +
          " | " + fmt("%.2f", f.at("bandwidth_bytes_per_s").get<double>() / 1e9) + " | " +
          fmt("%.1f", f.at("latency_s").get<double>() * 1e6) + " | " +
          (p.contains("predicted") ? fmt("%.2f", p.at("predicted").at("overlap")) : "-") + " |\n";
  }
  return md;
}

std::string cluster_table(const nlohmann::json& cluster) {
  const auto& c = cluster.at("params");
  // The MFU and step floor rest on tools/device-check when cluster.measured names its JSON.
  const std::string measured = c.value("measured_on", "");
  std::string md =
      (measured.empty() ? std::string()
                        : "MFU and step floor measured by tools/device-check on " + measured +
                              " (" + c.at("measured").get<std::string>() + "). ") +
      "Assumed: " + fmt("%.0f", c.at("gpu_peak_tflops")) + " TFLOP/s per GPU in bf16, " +
      fmt("%.1f", c.at("gpu_peak_tflops_fp32")) + " in fp32, at MFU " +
      fmt("%.2f", c.at("gpu_mfu")) + ", never under " + fmt("%.1f", c.at("gpu_step_floor_ms")) +
      " ms a step; " + c.at("gpus_per_node").dump() + " GPUs per node; within a node " +
      fmt("%.0f", c.at("intra_node_gbps")) + " Gb/s, " +
      fmt("%.0f", c.at("intra_node_latency_us")) + " us; between nodes " +
      fmt("%.0f", c.at("inter_node_gbps")) + " Gb/s, " +
      fmt("%.0f", c.at("inter_node_latency_us")) + " us; overlap " + fmt("%.2f", c.at("overlap")) +
      "; data wait per step as measured here.\n\n"
      "| configuration | nodes | GPUs | step ms | tokens/s | speedup | efficiency | bottleneck | "
      "fix |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : cluster.at("rows"))
    md += "| " +
          (r.at("config").get<std::string>().empty() ? std::string("-")
                                                     : r.at("config").get<std::string>()) +
          " | " + r.at("nodes").dump() + " | " + r.at("gpus").dump() + " | " +
          fmt("%.2f", r.at("step_seconds").get<double>() * 1e3) + " | " +
          fmt("%.0f", r.at("tokens_per_s")) + " | " + fmt("%.2f", r.at("speedup")) + " | " +
          fmt("%.3f", r.at("efficiency")) + " | " + r.at("bottleneck").get<std::string>() + " | " +
          r.at("fix").get<std::string>() + " |\n";
  return md;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string scaling_report_md(const nlohmann::json& study, const std::vector<Plot>& plots,
                              const std::string& plots_note, const std::string& plot_prefix) {
  std::string md = "Scaling: " + study.at("scaling").get<std::string>() + ", " +
                   study.at("repeats").dump() + " repeats per point, on a host with " +
                   study.at("cores").dump() + " cores.\n\n" + measured_table(study);
  if (!study.at("skipped").empty()) {
    md += "\nSkipped on this host:\n";
    for (const auto& s : study.at("skipped"))
      md +=
          "- " + s.at("label").get<std::string>() + ": " + s.at("reason").get<std::string>() + "\n";
  }
  md += study.at("scaling") == "weak"
            ? "\nWeak scaling (every rank runs all steps): efficiency E = T1/TN, speedup S = N "
              "T1/TN, overhead O = TN - T1 (T = the training loop of rank 0, every segment of a "
              "resumed run included). "
            : "\nSpeedup S = T1/TN, efficiency E = S/N, overhead O = TN - T1/N (the paper's "
              "equations 1-3; T = the training loop of rank 0, every segment of a resumed run "
              "included; in strong scaling TN is scaled to the 1-rank run's samples where N does "
              "not divide the steps). ";
  md +=
      "Ceiling: the slowest of N independent 1-rank runs side by side against one alone, what "
      "this host allows N ranks without any communication; E / ceiling is the efficiency left "
      "to the software, taken repeat by repeat (each repeat's runs follow each other) and the "
      "median reported. Step E: the same ratio from the median step times (start-up and warm-up "
      "steps left out), what the model predicts; step E / ceiling is then the independent "
      "ranks' slowest step against the coupled ranks' step. Phases are per step: medians, the "
      "data wait a mean.\n\n### Why, and "
      "predicted\n\n" +
      prediction_table(study) +
      "\nPredicted: one-rank phases of the same configuration, slowed by 1 / ceiling, plus the "
      "wait for the slowest of N ranks in lockstep (from the spread of the one-rank steps), "
      "plus the data wait, plus the ring all-reduce (2(N-1)/N x gradient bytes / bandwidth + "
      "2(N-1) x "
      "latency per bucket) less what backward hides. The overlap is what the ranks measured at "
      "each point (the share of backward after the first bucket's all-reduce started), or the "
      "study's `overlap` when given; with neither it is fitted on the first multi-rank point "
      "(calibration) and the other points are predictions.\n";
  const std::string fabrics = fabric_table(study);
  if (!fabrics.empty())
    md += "\nAll-reduce as measured by the ranks before training:\n\n" + fabrics;
  md += "\n### Predicted on the paper's hardware\n\n" + cluster_table(study.at("cluster")) +
        "\nThe paper measured speedups of 1.6 on 2 GPUs and 1.9 on 4 (efficiency 0.75 and 0.5).\n";
  md += "\n### Plots\n\n";
  if (!plots_note.empty()) md += plots_note + "\n";
  for (const auto& p : plots)
    md += "![" + p.title + "](" + plot_prefix + std::filesystem::path(p.png).filename().string() +
          ") ([SVG](" + plot_prefix + std::filesystem::path(p.svg).filename().string() + "))\n";
  return md;
}

std::string scaling_csv(const nlohmann::json& study) {
  std::string csv =
      "label,config,world_size,threads,runs,steps_per_rank,seconds_median,seconds_min,"
      "seconds_max,tokens_per_s,speedup,efficiency,overhead_seconds,step_efficiency,ceiling,"
      "efficiency_vs_ceiling,step_efficiency_vs_ceiling,forward_s,backward_s,optimizer_s,data_wait_"
      "s,allreduce_s,mfu,"
      "predicted_efficiency,prediction_error,bottleneck,fix\n";
  for (const auto& p : study.at("points")) {
    const auto& ph = p.at("phases");
    const bool predicted = p.contains("predicted");
    auto g = [](double v) { return fmt("%.6g", v); };
    csv += csv_field(p.at("label")) + "," + csv_field(p.at("config")) + "," +
           p.at("world_size").dump() + "," + p.at("threads").dump() + "," + p.at("runs").dump() +
           "," + p.at("steps_per_rank").dump() + "," + g(p.at("seconds").at("median")) + "," +
           g(p.at("seconds").at("min")) + "," + g(p.at("seconds").at("max")) + "," +
           g(p.at("tokens_per_s").at("median")) + "," + g(num(p, "speedup")) + "," +
           g(num(p, "efficiency")) + "," + g(num(p, "overhead_seconds")) + "," +
           g(num(p, "step_efficiency")) + "," + (p.contains("ceiling") ? g(p.at("ceiling")) : "") +
           "," + (p.contains("efficiency_vs_ceiling") ? g(p.at("efficiency_vs_ceiling")) : "") +
           "," +
           (p.contains("step_efficiency_vs_ceiling")
                ? g(p.at("step_efficiency_vs_ceiling").at("median"))
                : "") +
           "," + g(ph.at("forward")) + "," + g(ph.at("backward")) + "," + g(ph.at("optimizer")) +
           "," + g(ph.at("data_wait")) + "," + g(ph.at("allreduce")) + "," + g(p.at("mfu")) + "," +
           (predicted ? g(p.at("predicted").at("efficiency")) : "") + "," +
           (predicted ? g(p.at("predicted").at("error")) : "") + "," +
           (predicted ? csv_field(p.at("predicted").at("bottleneck")) : "") + "," +
           (predicted ? csv_field(p.at("predicted").at("fix")) : "") + "\n";
  }
  return csv;
}

}  // namespace hlm
