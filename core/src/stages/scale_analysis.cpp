// scale-analysis: runs pretraining at several world sizes on this host (Gloo through c10d)
// with the same total work (strong scaling: world size N runs ceil(steps / N) steps of the
// same per-rank batch) and computes the paper's equations: speedup S = T1 / TN, efficiency
// E = S / N, overhead O = TN - T1 / N. Where N does not divide steps, N does a little more
// work; times are then compared per sample (TN is scaled to world size 1's samples), and the
// table shows every row's samples. A world size that finished is kept across --resume.
#include <cstdio>
#include <fstream>
#include <optional>

#include "dist/preemption.h"
#include "engine/run_directory.h"
#include "engine/stage.h"
#include "hlm/errors.h"
#include "stages/train_params.h"
#include "train/rank_job.h"

namespace hlm {
namespace {

StageOutput run_scale_analysis(StageContext& ctx) {
  const auto& p = ctx.params();
  const auto& tokens = ctx.input_of_kind("tokenize");
  const std::vector<int> worlds = p.at("world_sizes");
  if (worlds.empty() || worlds.front() != 1)
    throw ConfigError("{}:{}: world_sizes must start with 1 (T1 is the baseline of every ratio)",
                      ctx.instance.file, ctx.instance.line);
  const int64_t total_steps = p.at("steps");
  const int64_t samples_per_rank_step =
      p.at("batch").get<int64_t>() * p.at("accumulation").get<int64_t>();
  nlohmann::json rows = nlohmann::json::array();
  double t1 = 0, tokens_per_s_1 = 0;
  int64_t samples_1 = 0;
  std::string md =
      "| ranks | steps/rank | samples | time s | tokens/s | speedup | efficiency | overhead s | "
      "all-reduce s | MFU |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (int world : worlds) {
    if (stop_signal_received())
      throw Preempted(
          "scale-analysis stopped by a signal before world size {} "
          "(finished world sizes are kept); continue with hlm run --resume RUN_DIR",
          world);
    nlohmann::json options = training_options_json(p);
    const int64_t steps = std::max<int64_t>(1, (total_steps + world - 1) / world);
    options["steps"] = steps;
    const int64_t samples = steps * world * samples_per_rank_step;
    const std::string out_dir = ctx.stage_dir + "/world" + std::to_string(world);
    nlohmann::json job = {{"stage", ctx.instance.id + "-w" + std::to_string(world)},
                          {"model", p.at("model")},
                          {"backend", p.at("backend")},
                          {"options", options},
                          {"token_store", tokens.at("artifacts").at("token_store")},
                          {"out_dir", out_dir}};
    const std::optional<nlohmann::json> finished = read_json(out_dir + "/result_rank0.json");
    ctx.progress(
        "world size " + std::to_string(world) + ": " +
        (finished ? "kept from the interrupted run" : std::to_string(steps) + " steps per rank"));
    const nlohmann::json r =
        finished ? *finished : run_job_on_ranks(job, world, ctx.plugins, nullptr, ctx.launcher);
    // Loop time of every segment, also when this world size was resumed from a checkpoint.
    const double t = r.at("train_seconds");
    if (world == 1) t1 = t, tokens_per_s_1 = r.at("tokens_per_s"), samples_1 = samples;
    const double t_same_work = t * double(samples_1) / double(samples);
    const double speedup = t1 / t_same_work, efficiency = speedup / world,
                 overhead = t_same_work - t1 / world;
    rows.push_back({{"world_size", world},
                    {"steps_per_rank", steps},
                    {"samples", samples},
                    {"seconds", t},
                    {"tokens_per_s", r.at("tokens_per_s")},
                    {"speedup", speedup},
                    {"efficiency", efficiency},
                    {"overhead_seconds", overhead},
                    {"allreduce_seconds", r.at("allreduce_seconds")},
                    {"mfu", r.at("mfu")},
                    {"throughput_speedup", r.at("tokens_per_s").get<double>() / tokens_per_s_1}});
    char row[256];
    std::snprintf(
        row, sizeof(row), "| %d | %lld | %lld | %.2f | %.0f | %.2f | %.2f | %.2f | %.2f | %.3f |\n",
        world, (long long)steps, (long long)samples, t, r.at("tokens_per_s").get<double>(), speedup,
        efficiency, overhead, r.at("allreduce_seconds").get<double>(), r.at("mfu").get<double>());
    md += row;
    char line[128];
    std::snprintf(line, sizeof(line), "world size %d: %.2f s, speedup %.2f, efficiency %.2f", world,
                  t, speedup, efficiency);
    ctx.progress(line);
  }
  StageOutput out;
  out.results["rows"] = rows;
  out.report_md = md +
                  "\nSpeedup S = T1/TN, efficiency E = S/N, overhead O = TN - T1/N (time = "
                  "training loop of rank 0, every segment of a resumed run included; where a "
                  "row's samples differ from the first row's, TN is scaled to the first "
                  "row's samples).\n";
  const std::string path = ctx.stage_dir + "/scaling.md";
  std::ofstream(path) << out.report_md;
  out.artifacts["table"] = path;
  return out;
}

}  // namespace

StageKind scale_analysis_stage() {
  auto params = training_param_specs("40", "3e-4");
  params.push_back({"model", "plugin:model", "", "the model (a plugin block)", true});
  params.push_back(
      {"backend", "plugin:backend", R"({"plugin": "gloo"})", "process-group backend", false});
  params.push_back({"world_sizes", "list", "[1, 2]", "ranks to measure, starting with 1", false});
  return {"scale-analysis", "1", params, run_scale_analysis, /*external_inputs=*/nullptr};
}

}  // namespace hlm
