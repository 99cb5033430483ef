// scale-analysis: the paper's scaling study on the configured runner. Every point of a grid
// over training params and resources (scaling/scaling_grid.h) is trained `repeats` times,
// round by round so that a drifting machine touches every point alike; medians and ranges are
// kept. Strong scaling (the paper's setting): N ranks share the total steps, ceil(steps / N)
// each; weak: every rank runs all steps. Each N-rank point is also run as N independent
// 1-rank trainings side by side (the host's ceiling: what N ranks reach without any
// communication), and its ranks time the backend's all-reduce before training. From these the
// performance model (scaling/performance_model.h) predicts every point, names its bottleneck
// and predicts the paper's hardware (scaling/cluster_prediction.h). Finished runs are kept
// across --resume.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "distributed/preemption.h"
#include "engine/run_directory.h"
#include "engine/stage.h"
#include "hlm/errors.h"
#include "scaling/cluster_prediction.h"
#include "scaling/scaling_grid.h"
#include "scaling/scaling_plots.h"
#include "scaling/scaling_report.h"
#include "scaling/scaling_study.h"
#include "stages/train_params.h"
#include "train/rank_job.h"
#include "util/atomic_file.h"

namespace hlm {
namespace {

// Axes that are not training params: the model's window and the backend plugin.
const char* const kResourceAxes[] = {"context", "backend", "nodes"};

std::vector<std::string> allowed_axes() {
  std::vector<std::string> axes(std::begin(kResourceAxes), std::end(kResourceAxes));
  for (const auto& spec : training_param_specs("0", "0")) axes.push_back(spec.name);
  return axes;
}

// The training job of one point: the stage's params with the point's axes applied.
nlohmann::json point_job(const StageContext& ctx, const ScalingPoint& point, Scaling scaling,
                         const std::string& out_dir) {
  const auto& p = ctx.params();
  nlohmann::json options = training_options_json(p);
  nlohmann::json model = p.at("model"), backend = p.at("backend");
  for (const auto& [axis, value] : point.axes.items()) {
    if (axis == "context")
      model["context"] = value;
    else if (axis == "backend" && value != backend.at("plugin"))
      backend = {{"plugin", value}};  // the stage's backend block belongs to another plugin
    else if (axis != "backend" && axis != "nodes")  // nodes: where the ranks run (run_or_reuse)
      options[axis] = value;
  }
  const int64_t steps = options.at("steps");
  const int world = point.world_size;
  options["steps"] =
      scaling == Scaling::kStrong ? std::max<int64_t>(1, (steps + world - 1) / world) : steps;
  return {{"stage", ctx.instance.id + "-" + point.dir},
          {"model", model},
          {"backend", backend},
          {"options", options},
          {"token_store", ctx.input_of_kind("tokenize").at("artifacts").at("token_store")},
          {"out_dir", out_dir},
          {"probe_fabric", world > 1}};
}

// Runs a job unless an earlier (interrupted) run of this stage finished it. Independent ranks
// are a measurement of ranks side by side: kept only when every rank finished, else run
// again from the start, all together.
nlohmann::json run_or_reuse(StageContext& ctx, const nlohmann::json& job, int world, int nodes,
                            const std::string& what) {
  const std::string out_dir = job.at("out_dir");
  const bool independent = job.value("independent", false);
  bool all_finished = true;
  for (int r = 0; r < (independent ? world : 1); ++r)
    all_finished = all_finished &&
                   std::filesystem::exists(out_dir + "/result_rank" + std::to_string(r) + ".json");
  if (all_finished) {
    ctx.progress(what + ": kept from the interrupted run");
    return *read_json(out_dir + "/result_rank0.json");
  }
  if (independent) std::filesystem::remove_all(out_dir);
  if (stop_signal_received())
    throw Preempted(
        "scale-analysis stopped by a signal before {} (finished runs are kept); "
        "continue with hlm run --resume RUN_DIR",
        what);
  ctx.progress(what + ": " + std::to_string(job.at("options").at("steps").get<int64_t>()) +
               " steps per rank");
  RankLauncher launcher = ctx.launcher;
  // With a nodes axis a point says over how many nodes its ranks spread (srun would spread
  // them over the whole allocation); without one, srun places them as for any stage.
  if (nodes > 0) launcher.nodes = nodes;
  return run_job_on_ranks(job, world, ctx.plugins, nullptr, launcher);
}

// The hosts a point may spread over: the SLURM allocation's when its ranks start with srun.
int nodes_available(const RankLauncher& launcher) {
  if (launcher.kind != RankLauncher::Kind::srun) return 1;
  const char* nodes = std::getenv("SLURM_JOB_NUM_NODES");
  return nodes != nullptr ? std::max(1, std::atoi(nodes)) : 1;
}

// The world sizes of the study, checked: 1 first (T1 is the baseline of every ratio), then
// distinct sizes of at least 2.
std::vector<int> checked_world_sizes(const nlohmann::json& p, const std::string& where) {
  const std::vector<int> worlds = p.at("world_sizes");
  if (worlds.empty() || worlds.front() != 1)
    throw ConfigError("{}: world_sizes must start with 1 (T1 is the baseline of every ratio)",
                      where);
  for (size_t i = 1; i < worlds.size(); ++i)
    if (worlds[i] < 2 || std::count(worlds.begin(), worlds.end(), worlds[i]) > 1)
      throw ConfigError("{}: world_sizes after the first must be distinct and at least 2 (got {})",
                        where, worlds[i]);
  return worlds;
}

// Each point's runs (one result per repeat) and, where asked, its ranks' independent ceilings.
struct Measured {
  std::vector<std::vector<nlohmann::json>> runs;
  std::vector<std::vector<double>> ceilings;
};

// Runs the grid round by round: repeat r of every point before repeat r + 1 of any.
Measured measure_grid(StageContext& ctx, const ScalingGrid& grid, Scaling scaling, int repeats) {
  Measured m{std::vector<std::vector<nlohmann::json>>(grid.points.size()),
             std::vector<std::vector<double>>(grid.points.size())};
  const bool measure_ceiling = ctx.params().at("ceiling");
  for (int rep = 0; rep < repeats; ++rep) {
    for (size_t i = 0; i < grid.points.size(); ++i) {
      const ScalingPoint& point = grid.points[i];
      const std::string dir = ctx.stage_dir + "/points/" + point.dir + "/rep" + std::to_string(rep);
      const std::string what = point.label + " (repeat " + std::to_string(rep + 1) + " of " +
                               std::to_string(repeats) + ")";
      const nlohmann::json job = point_job(ctx, point, scaling, dir);
      const int nodes = point.axes.contains("nodes") ? point.nodes : 0;
      nlohmann::json result = run_or_reuse(ctx, job, point.world_size, nodes, what);
      result["backend"] = job.at("backend").at("plugin");  // what the model needs besides
      result["bucket_cap_mb"] = job.at("options").at("bucket_cap_mb");
      result["samples_per_rank_step"] = job.at("options").at("batch").get<int64_t>() *
                                        job.at("options").at("accumulation").get<int64_t>();
      m.runs[i].push_back(result);
      if (!measure_ceiling || point.world_size == 1) continue;
      auto alone = point_job(ctx, point, scaling, dir + "/independent");
      alone["independent"] = true;
      alone["probe_fabric"] = false;
      run_or_reuse(ctx, alone, point.world_size, nodes, what + ", ranks independent");
      m.ceilings[i].push_back(
          slowest_independent_tokens_per_s(dir + "/independent", point.world_size));
    }
  }
  return m;
}

// The study's files (scaling.md beside plots/, scaling.csv, scaling.json), its plots, the
// report's section (report.md sits in the run directory) and the stage's results.
StageOutput study_output(StageContext& ctx, const nlohmann::json& study) {
  StageOutput out;
  std::string plots_note;
  const auto plots = render_scaling_plots(study, ctx.stage_dir + "/plots", &plots_note);
  for (const auto& plot : plots) out.artifacts["plot_" + plot.name] = plot.png;
  out.report_md = scaling_report_md(study, plots, plots_note, ctx.instance.id + "/plots/");
  struct File {
    const char* key;
    const char* name;
    std::string text;
  };
  const File files[] = {
      {"table", "scaling.md", scaling_report_md(study, plots, plots_note, "plots/")},
      {"csv", "scaling.csv", scaling_csv(study)},
      {"json", "scaling.json", study.dump(2) + "\n"}};
  for (const File& f : files) {
    const std::string path = ctx.stage_dir + "/" + f.name;
    write_file_atomic(path, f.text);
    out.artifacts[f.key] = path;
  }
  out.results["rows"] = study.at("points");
  out.results["skipped"] = study.at("skipped");
  out.results["cluster"] = study.at("cluster").at("rows");
  return out;
}

void print_points(StageContext& ctx, const nlohmann::json& study) {
  for (const auto& point : study.at("points")) {
    char line[200];
    std::snprintf(line, sizeof(line), "%s: %.2f s, speedup %.2f, efficiency %.2f",
                  point.at("label").get<std::string>().c_str(),
                  point.at("seconds").at("median").get<double>(), point.value("speedup", 0.0),
                  point.value("efficiency", 0.0));
    ctx.progress(line);
  }
}

StageOutput run_scale_analysis(StageContext& ctx) {
  const auto& p = ctx.params();
  const std::string where = ctx.instance.file + ":" + std::to_string(ctx.instance.line);
  const std::vector<int> worlds = checked_world_sizes(p, where);
  const int repeats = p.at("repeats");
  if (repeats < 1) throw ConfigError("{}: repeats must be at least 1", where);
  const std::string scaling_name = p.at("scaling");
  if (scaling_name != "strong" && scaling_name != "weak")
    throw ConfigError("{}: scaling must be strong or weak, not '{}'", where, scaling_name);
  const Scaling scaling = scaling_from_name(scaling_name.c_str());
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  const ScalingGrid grid = expand_grid(worlds, p.at("grid"), allowed_axes(), p.at("threads"), cores,
                                       p.at("oversubscribe"), where, nodes_available(ctx.launcher));
  for (const auto& s : grid.skipped) ctx.progress("skipped " + s.label + ": " + s.reason);
  if (grid.points.empty())
    throw ConfigError(
        "{}: every point of the grid was skipped (see above); lower the ranks "
        "or threads, or set oversubscribe: true",
        where);

  const Measured measured = measure_grid(ctx, grid, scaling, repeats);
  nlohmann::json study =
      summarize_study(grid, measured.runs, measured.ceilings, scaling, repeats, cores);
  // Each point's precision (a grid axis, else the stage's param): the GPU prediction takes the
  // peak of that precision.
  for (auto& point : study.at("points"))
    point["bf16"] = point.at("axes").contains("bf16") ? point.at("axes").at("bf16").get<bool>()
                                                      : p.at("bf16").get<bool>();
  predict_measured_points(study, p.at("overlap"));
  study["cluster"] = predict_cluster(study, p.at("cluster"), where);
  StageOutput out = study_output(ctx, study);
  print_points(ctx, study);
  return out;
}

}  // namespace

StageKind scale_analysis_stage() {
  auto params = training_param_specs("40", "3e-4");
  params.push_back(device_param_spec());
  params.push_back({"model", "plugin:model", "", "the model (a plugin block)", true});
  params.push_back(
      {"backend", "plugin:backend", R"({"plugin": "gloo"})", "process-group backend", false});
  params.push_back({"world_sizes", "list", "[1, 2]", "ranks to measure, starting with 1", false});
  params.push_back({"grid", "map", "{}",
                    "axis -> values: any training param, `context` (the model's window), "
                    "`backend` (a backend plugin) or `nodes` (SLURM nodes the ranks spread over); "
                    "every combination is measured at every world size",
                    false});
  params.push_back(
      {"repeats", "int[1,]", "3", "runs of every point (median and range kept)", false});
  params.push_back({"scaling", "string", "\"strong\"",
                    "strong (N ranks share the steps, the paper's setting) or weak (each rank "
                    "runs all steps)",
                    false});
  params.push_back({"oversubscribe", "bool", "false",
                    "run points needing more cores (ranks x threads) than the host has", false});
  params.push_back({"ceiling", "bool", "true",
                    "also run each N-rank point as N independent ranks side by side (what the "
                    "host allows without communication)",
                    false});
  params.push_back({"overlap", "float", "-1",
                    "share of backward that hides the all-reduce, 0..1, for the model (-1: "
                    "fitted on the study's first multi-rank point)",
                    false});
  params.push_back({"cluster", "map", "{}",
                    "the hardware to predict (defaults: 1-4 nodes x 4 A100, NVLink within a "
                    "node, HDR InfiniBand 200 Gb/s between nodes; see docs/scaling.md)",
                    false});
  return {"scale-analysis",      "2", params, run_scale_analysis, /*external_inputs=*/nullptr,
          check_training_device,
          /*check_plan=*/nullptr};
}

}  // namespace hlm
