// pretrain: model plugin + token store -> foundation checkpoint. world_size > 1 runs the
// ranks as processes through the multiproc runner, all-reducing over the backend plugin.
#include <cstdio>

#include "engine/stage.h"
#include "metrics/metrics.h"
#include "plots/gnuplot.h"
#include "stages/train_params.h"
#include "train/gpu_usage.h"
#include "train/rank_job.h"

namespace hlm {
namespace {

std::string loss_curve(const std::vector<double>& losses, size_t points) {
  std::string out;
  const size_t n = losses.size();
  for (size_t i = 0; i < points && n; ++i) {
    const size_t step = std::min(n - 1, i * (n - 1) / std::max<size_t>(1, points - 1));
    char cell[64];
    std::snprintf(cell, sizeof(cell), "%s%zu: %.3f", out.empty() ? "" : ", ", step + 1,
                  losses[step]);
    out += cell;
  }
  return out;
}

StageOutput run_pretrain(StageContext& ctx) {
  const auto& p = ctx.params();
  const auto& tokens = ctx.input_of_kind("tokenize");
  nlohmann::json job = {{"stage", ctx.instance.id},
                        {"model", p.at("model")},
                        {"backend", p.at("backend")},
                        {"options", training_options_json(p)},
                        {"token_store", tokens.at("artifacts").at("token_store")},
                        {"out_dir", ctx.stage_dir},
                        {"max_restarts", p.at("max_restarts")}};
  const int world = p.at("world_size").get<int>();
  ctx.progress("training on " + std::to_string(world) + " rank(s), " +
               std::to_string(p.at("steps").get<int64_t>()) + " steps");
  nlohmann::json r = run_job_on_ranks(job, world, ctx.plugins, ctx.progress, ctx.launcher);
  // Rank processes set their held-out loss just before they exit, usually between two
  // scrapes: the run's own endpoint keeps rank 0's for as long as the run goes on.
  if (world > 1)
    metrics().eval_loss(ctx.instance.id, r.at("eval_loss").get<double>(),
                        r.at("steps").get<uint64_t>());
  StageOutput out;
  out.artifacts["checkpoint"] = r.at("checkpoint");
  out.results = r;
  out.results["model"] = p.at("model");
  // Which tokens the checkpoint reads: fine-tuning refuses a store of another tokenizer.
  out.results["tokenizer"] = tokens.at("results").at("tokenizer");
  std::vector<double> losses = r.at("losses");
  char table[512];
  std::snprintf(table, sizeof(table),
                "| world size | steps | loss first | loss last | held-out loss | tokens/s | MFU |\n"
                "|---|---|---|---|---|---|---|\n| %d | %lld | %.4f | %.4f | %.4f | %.0f | %.3f |\n",
                world, (long long)r.at("steps").get<int64_t>(), r.at("loss_first").get<double>(),
                r.at("loss_last").get<double>(), r.at("eval_loss").get<double>(),
                r.at("tokens_per_s").get<double>(), r.at("mfu").get<double>());
  out.report_md =
      std::string(table) +
      (r.contains("gpu") ? "\nGPU (rank 0): " + gpu_usage_text(r.at("gpu")) + "\n" : "") +
      "\nLoss curve (step: loss): " + loss_curve(losses, 8) + "\n";
  std::string plot_note;
  for (const auto& plot : render_line_plot("loss", "Training loss (" + ctx.instance.id + ")",
                                           "step", "loss (next-token cross entropy)", losses,
                                           ctx.stage_dir + "/plots", &plot_note)) {
    out.artifacts["plot_loss"] = plot.png;
    // report.md sits in the run directory, one level above the stage's folder.
    out.report_md += "\n![" + plot.title + "](" + ctx.instance.id + "/plots/loss.png)\n";
  }
  if (!plot_note.empty()) out.report_md += "\n" + plot_note + "\n";
  char line[160];
  std::snprintf(line, sizeof(line), "loss %.3f -> %.3f, held-out %.3f, %.0f tokens/s",
                r.at("loss_first").get<double>(), r.at("loss_last").get<double>(),
                r.at("eval_loss").get<double>(), r.at("tokens_per_s").get<double>());
  ctx.progress(line);
  return out;
}

}  // namespace

StageKind pretrain_stage() {
  auto params = training_param_specs("200", "3e-4");
  params.push_back(device_param_spec());
  params.push_back({"model", "plugin:model", "", "the model (a plugin block)", true});
  params.push_back({"backend", "plugin:backend", R"({"plugin": "gloo"})",
                    "process-group backend for world_size > 1", false});
  params.push_back({"world_size", "int[1,]", "1",
                    "data-parallel ranks (hlm submit sets nodes x ntasks_per_node)", false});
  params.push_back({"max_restarts", "int[0,]", "3",
                    "times a failed group of ranks is restarted from its newest checkpoint",
                    false});
  return {"pretrain",
          "2",
          params,
          run_pretrain,
          /*external_inputs=*/nullptr,
          check_training_device};
}

}  // namespace hlm
