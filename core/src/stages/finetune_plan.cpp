// finetune's check against the stages it needs (see finetune_plan.h).
#include "stages/finetune_plan.h"

#include <optional>
#include <string>

#include "hlm/errors.h"
#include "stages/finished_stage.h"

namespace hlm {
namespace {

// The pretrain instance among `instance`'s needs, or null.
const workflow::StageInstance* needed_pretrain(const workflow::StageInstance& instance,
                                               const workflow::Workflow& wf) {
  for (const std::string& id : instance.needs)
    for (const workflow::StageInstance& other : wf.stages)
      if (other.id == id && other.kind == "pretrain") return &other;
  return nullptr;
}

// The model the pretrain stage hands on, and where it comes from (for the error); nothing
// where `from` names a run that is not there or not finished yet (a job submitted to start
// after the foundation's: its pretrain stage says so when it runs).
struct PretrainedModel {
  nlohmann::json block;
  std::string origin;
};

std::optional<PretrainedModel> model_of(const workflow::StageInstance& pretrain) {
  const std::string from = other_run(pretrain.params, "from");
  if (from.empty())
    return PretrainedModel{pretrain.params.at("model"), "the model of stage '" + pretrain.id + "'"};
  nlohmann::json m;
  try {
    m = finished_stage(from, "pretrain", "stage '" + pretrain.id + "': from");
  } catch (const ConfigError&) {
    return std::nullopt;
  }
  const nlohmann::json& results = m.value("results", nlohmann::json::object());
  if (!results.contains("model")) return std::nullopt;
  return PretrainedModel{results.at("model"),
                         "the checkpoint's model (" + m.at("dir").get<std::string>() + ")"};
}

}  // namespace

void check_finetune_plan(const workflow::StageInstance& instance, const workflow::Workflow& wf) {
  const std::string task = instance.params.value("task", "beats");
  if (task != "af" && task != "record") return;
  const workflow::StageInstance* pretrain = needed_pretrain(instance, wf);
  if (!pretrain) return;  // fine-tuning refuses a missing pretrain stage itself
  const std::optional<PretrainedModel> model = model_of(*pretrain);
  if (!model || !model->block.contains("context") ||
      !model->block.at("context").is_number_integer())
    return;
  const int64_t context = model->block.at("context");
  const int64_t length = instance.params.at("segment_beats");
  if (length < 2 || length > context)
    throw ConfigError(
        "{}:{}: stage '{}': segment_beats={} must be from 2 to {}, the context of {}, which it "
        "fine-tunes; give each segment_beats (each value of a matrix) from 2 to {}, or "
        "fine-tune a model with a longer context",
        instance.file, instance.line, instance.id, length, context, model->origin, context);
}

}  // namespace hlm
