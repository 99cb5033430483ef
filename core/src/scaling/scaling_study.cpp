// Reduction of a scaling study's runs and the model's predictions (see scaling_study.h).
#include "scaling/scaling_study.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "scaling/performance_model.h"

namespace hlm {
namespace {

nlohmann::json spread_json(const Spread& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

// The median over repeats of a number found at `path` in each run.
double median_of(const std::vector<nlohmann::json>& runs,
                 const nlohmann::json::json_pointer& path) {
  std::vector<double> values;
  for (const auto& r : runs)
    if (r.contains(path)) values.push_back(r.at(path).get<double>());
  return spread_of(values).median;
}

nlohmann::json phases_of(const std::vector<nlohmann::json>& runs) {
  std::vector<double> data_wait;
  for (const auto& r : runs)
    data_wait.push_back(r.at("data_wait_seconds").get<double>() /
                        std::max<int64_t>(1, r.at("steps").get<int64_t>()));
  // Quantile by quantile, the median over the repeats that timed steps (a repeat resumed
  // after its last step timed none and has no quantiles).
  std::vector<std::vector<double>> per_run;
  size_t count = 0;
  for (const auto& r : runs) {
    per_run.push_back(r.value("step_without_allreduce_quantiles", std::vector<double>{}));
    count = std::max(count, per_run.back().size());
  }
  std::vector<double> quantiles;
  for (size_t k = 0; k < count; ++k) {
    std::vector<double> at_k;
    for (const auto& q : per_run)
      if (q.size() == count) at_k.push_back(q[k]);
    quantiles.push_back(spread_of(at_k).median);
  }
  using P = nlohmann::json::json_pointer;
  return {{"step_quantiles", quantiles},
          {"forward", median_of(runs, P("/phase_seconds_median/forward"))},
          {"backward", median_of(runs, P("/phase_seconds_median/backward"))},
          {"optimizer", median_of(runs, P("/phase_seconds_median/optimizer"))},
          {"allreduce", median_of(runs, P("/phase_seconds_median/allreduce"))},
          {"data_wait", spread_of(data_wait).median},
          {"step", median_of(runs, P("/step_seconds_median"))}};
}

nlohmann::json fabric_of(const std::vector<nlohmann::json>& runs, int world) {
  if (world <= 1 || !runs.front().contains("fabric_probe")) return nullptr;
  using P = nlohmann::json::json_pointer;
  const auto& probe = runs.front().at("fabric_probe");
  const Fabric f =
      fabric_from_probe(runs.front().at("backend"), world, probe.at("small_bytes"),
                        median_of(runs, P("/fabric_probe/small_seconds")), probe.at("large_bytes"),
                        median_of(runs, P("/fabric_probe/large_seconds")));
  return {{"name", f.name},
          {"bandwidth_bytes_per_s", f.bandwidth_bytes_per_s},
          {"latency_s", f.latency_s}};
}

// GradientSync's bucket count as the run recorded it; estimated from the bytes for runs that
// did not record it.
int buckets_of(const nlohmann::json& run) {
  const int recorded = run.value("gradient_buckets", 0);
  return recorded > 0 ? recorded : bucket_count(run.at("gradient_bytes"), run.at("bucket_cap_mb"));
}

ModelInputs model_inputs(const nlohmann::json& point, const nlohmann::json& baseline) {
  ModelInputs in;
  const auto& ph = baseline.at("phases");
  in.alone = {ph.at("forward"), ph.at("backward"), ph.at("optimizer"), ph.at("data_wait"),
              ph.at("step_quantiles").get<std::vector<double>>()};
  const double ceiling = point.value("ceiling", 0.0);
  in.slowdown = ceiling > 0 ? 1.0 / ceiling : 1.0;
  in.gradient_bytes = point.at("gradient_bytes");
  in.buckets = point.at("gradient_buckets");
  const auto& f = point.at("fabric");
  if (!f.is_null()) in.fabric = {f.at("name"), f.at("bandwidth_bytes_per_s"), f.at("latency_s")};
  return in;
}

}  // namespace

nlohmann::json summarize_study(const ScalingGrid& grid,
                               const std::vector<std::vector<nlohmann::json>>& runs,
                               const std::vector<std::vector<double>>& ceilings, Scaling scaling,
                               int repeats, int cores) {
  nlohmann::json points = nlohmann::json::array();
  std::map<std::string, size_t> baseline_of_config;  // config -> index of its 1-rank point
  for (size_t i = 0; i < grid.points.size(); ++i) {
    const ScalingPoint& pt = grid.points[i];
    const auto& rs = runs[i];
    std::vector<double> seconds, tokens;
    for (const auto& r : rs) {
      seconds.push_back(r.at("train_seconds"));
      tokens.push_back(r.at("tokens_per_s"));
    }
    using P = nlohmann::json::json_pointer;
    nlohmann::json point = {{"label", pt.label},
                            {"config", pt.config},
                            {"baseline_config", pt.baseline_config},
                            {"nodes", pt.nodes},
                            {"world_size", pt.world_size},
                            {"threads", pt.threads},
                            {"axes", pt.axes},
                            {"runs", rs.size()},
                            {"steps_per_rank", rs.front().at("steps")},
                            {"samples", rs.front().at("steps").get<int64_t>() * pt.world_size *
                                            rs.front().at("samples_per_rank_step").get<int64_t>()},
                            {"seconds", spread_json(spread_of(seconds))},
                            {"tokens_per_s", spread_json(spread_of(tokens))},
                            {"phases", phases_of(rs)},
                            {"mfu", median_of(rs, P("/mfu"))},
                            {"backend", rs.front().at("backend")},
                            {"bucket_cap_mb", rs.front().at("bucket_cap_mb")},
                            {"gradient_bytes", rs.front().at("gradient_bytes")},
                            {"gradient_buckets", buckets_of(rs.front())},
                            {"flops_per_token", rs.front().at("flops_per_token")},
                            {"tokens_per_rank_step", rs.front().at("tokens_per_rank_step")},
                            {"fabric", fabric_of(rs, pt.world_size)}};
    // How much of backward the bucket all-reduces can hide, as the ranks measured it (runs
    // made before they did have none).
    if (pt.world_size > 1 && rs.front().contains("backward_overlap"))
      point["backward_overlap"] = median_of(rs, P("/backward_overlap"));
    if (pt.world_size == 1) baseline_of_config[pt.baseline_config] = i;
    points.push_back(point);
  }
  for (size_t i = 0; i < points.size(); ++i) {
    auto& point = points[i];
    const auto it = baseline_of_config.find(point.at("baseline_config"));
    if (it == baseline_of_config.end()) continue;  // its 1-rank point was skipped
    const auto& base = points[it->second];
    const int n = point.at("world_size");
    // The paper's ratios from loop times; in strong scaling TN is scaled to the 1-rank run's
    // samples (N may not divide the steps).
    auto loop_ratios = [&](double t1, double tn, double steps_1, double steps_n) {
      if (scaling == Scaling::kStrong) tn *= steps_1 / (steps_n * n);
      return scaling_ratios(scaling, t1, tn, n);
    };
    // Per-sample time of a step (the per-rank batch is the same at every N): start-up and
    // warm-up steps left out, unlike the loop times of the paper's ratios.
    const double step_1 = base.at("phases").at("step"), step_n = point.at("phases").at("step");
    if (step_1 > 0 && step_n > 0) point["step_efficiency"] = step_1 / step_n;
    const ScalingRatios ratios =
        loop_ratios(base.at("seconds").at("median"), point.at("seconds").at("median"),
                    base.at("steps_per_rank"), point.at("steps_per_rank"));
    point["baseline"] = base.at("label");
    point["speedup"] = ratios.speedup;
    point["efficiency"] = ratios.efficiency;
    point["overhead_seconds"] = ratios.overhead_seconds;
    // The ceiling (the slowest independent rank against one alone) and E / ceiling, repeat by
    // repeat, then the median: a repeat's 1-rank run, coupled run and independent ranks follow
    // each other within a minute, so the drift of a shared machine over the study (10-20 %
    // here) cancels within each ratio instead of entering a ratio of medians taken over all
    // repeats. From step times the 1-rank run cancels entirely: the ratio is the independent
    // ranks' slowest step against the coupled ranks' step. A run too short to time any step
    // (all within timing_skip_steps) has 0 tokens/s: figures that would divide by it are left
    // out.
    std::vector<double> ceiling, vs_ceiling, step_vs_ceiling;
    const auto& runs_n = runs[i];
    const auto& runs_1 = runs[it->second];
    for (size_t r = 0; r < ceilings[i].size() && r < runs_1.size(); ++r) {
      const double alone = runs_1[r].at("tokens_per_s"), independent = ceilings[i][r];
      if (alone <= 0 || independent <= 0) continue;
      ceiling.push_back(independent / alone);
      if (r >= runs_n.size() || runs_n[r].at("tokens_per_s").get<double>() <= 0) continue;
      const double e_r = loop_ratios(runs_1[r].at("train_seconds"), runs_n[r].at("train_seconds"),
                                     runs_1[r].at("steps"), runs_n[r].at("steps"))
                             .efficiency;
      vs_ceiling.push_back(e_r / ceiling.back());
      step_vs_ceiling.push_back(runs_n[r].at("tokens_per_s").get<double>() / (n * independent));
    }
    if (!ceiling.empty()) point["ceiling"] = spread_of(ceiling).median;
    if (!vs_ceiling.empty()) {
      point["efficiency_vs_ceiling"] = spread_of(vs_ceiling).median;
      point["step_efficiency_vs_ceiling"] = spread_json(spread_of(step_vs_ceiling));
    }
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : grid.skipped) skipped.push_back({{"label", s.label}, {"reason", s.reason}});
  return {{"scaling", scaling == Scaling::kStrong ? "strong" : "weak"},
          {"repeats", repeats},
          {"cores", cores},
          {"axes", grid.axes},
          {"points", points},
          {"skipped", skipped}};
}

void predict_measured_points(nlohmann::json& study, double overlap) {
  auto& points = study.at("points");
  std::map<std::string, const nlohmann::json*> baselines;
  for (const auto& p : points)
    if (p.at("world_size") == 1) baselines[p.at("baseline_config")] = &p;
  // How much of backward hides the all-reduce is the training loop's, not the fabric's: given,
  // or as the ranks measured it at each point (the share of backward after the first bucket's
  // launch), or else one value for the study fitted on its first multi-rank point.
  std::optional<double> fitted;
  if (overlap >= 0) fitted = std::min(1.0, overlap);
  for (auto& point : points) {
    const int n = point.at("world_size");
    const auto base = baselines.find(point.at("baseline_config"));
    if (n <= 1 || base == baselines.end() || point.at("fabric").is_null()) continue;
    ModelInputs in = model_inputs(point, *base->second);
    const bool measured_overlap = overlap < 0 && point.contains("backward_overlap");
    const bool calibration = !fitted && !measured_overlap;
    if (calibration) fitted = overlap_from_measurement(in, n, point.at("phases").at("allreduce"));
    in.overlap = measured_overlap ? point.at("backward_overlap").get<double>() : *fitted;
    const Prediction pr = predict_step(in, n);
    const double measured = point.value("step_efficiency", 0.0);  // the model predicts steps
    point["predicted"] = {{"efficiency", pr.efficiency},
                          {"step_seconds", pr.step_seconds},
                          {"compute_seconds", pr.compute_seconds},
                          {"straggler_seconds", pr.straggler_seconds},
                          {"data_seconds", pr.data_seconds},
                          {"communication_seconds", pr.communication_seconds},
                          {"overlap", in.overlap},
                          {"calibration", calibration},
                          {"error", measured > 0 ? pr.efficiency / measured - 1 : 0.0},
                          {"bottleneck", pr.bottleneck},
                          {"fix", pr.fix}};
  }
}

}  // namespace hlm
