// finetune: foundation checkpoint + labelled token store -> beat classifier (N/S/V/F/Q).
// Records listed in holdout_records are left out, for evaluate.
#include <cstdio>

#include "engine/stage.h"
#include "hlm/model.h"
#include "hlm/token_store.h"
#include "ops/compute.h"
#include "stages/train_params.h"
#include "tasks/beat_classifier.h"
#include "train/checkpoint.h"
#include "train/train_options.h"

namespace hlm {
namespace {

StageOutput run_finetune(StageContext& ctx) {
  const auto& p = ctx.params();
  const auto& foundation = ctx.input_of_kind("pretrain");
  const nlohmann::json& tokens = ctx.input_of_kind("tokenize");
  const auto options = TrainOptions::from_params(training_options_json(p));
  set_compute_threads(options.threads);

  const nlohmann::json model_block = foundation.at("results").at("model");
  auto model = ctx.plugins.create<Model>("model", model_block.at("plugin"), model_block);
  load_module(model->module(), foundation.at("artifacts").at("checkpoint"));
  auto store = TokenStore::open(tokens.at("artifacts").at("token_store"));
  const std::vector<std::string> holdout = p.at("holdout_records");
  const double tail = p.at("holdout_tail").get<double>();
  const auto windows = beat_windows(store, select_records(store, holdout, /*exclude=*/true),
                                    model->context(), 0.0, 1.0 - tail);

  BeatClassifier classifier(model, options.seed);
  ctx.progress("fine-tuning on " + std::to_string(windows.size()) + " windows, " +
               std::to_string(options.steps) + " steps");
  const auto losses =
      classifier.fit(store, windows, options, {ctx.stage_dir + "/checkpoints", ctx.progress});
  const std::string path = ctx.stage_dir + "/classifier";
  classifier.save(path);

  StageOutput out;
  out.artifacts["classifier"] = path;
  out.artifacts["token_store"] = tokens.at("artifacts").at("token_store");
  out.results = {{"model", model_block},         {"losses", losses},
                 {"holdout_records", holdout},   {"holdout_tail", tail},
                 {"loss_first", losses.front()}, {"loss_last", losses.back()}};
  char line[200];
  std::snprintf(line, sizeof(line), "classification loss %.3f -> %.3f over %zu steps",
                losses.front(), losses.back(), losses.size());
  out.report_md = std::string(line) + "; held out for evaluation: records " +
                  (holdout.empty() ? "none" : nlohmann::json(holdout).dump()) + ", last " +
                  std::to_string(int(tail * 100)) + " % of every other record\n";
  ctx.progress(line);
  return out;
}

}  // namespace

StageKind finetune_stage() {
  auto params = training_param_specs("200", "1e-4", TrainingStage::kFineTune);
  params.push_back({"holdout_records", "list", "[]",
                    "records kept out of fine-tuning (inter-patient evaluation)", false});
  params.push_back({"holdout_tail", "float", "0.0",
                    "last fraction of every other record kept out (intra-patient evaluation)",
                    false});
  return {"finetune", "1", params, run_finetune, /*external_inputs=*/nullptr};
}

}  // namespace hlm
