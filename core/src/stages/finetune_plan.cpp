// finetune's check against the stages it needs (see finetune_plan.h).
#include "stages/finetune_plan.h"

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

// The model the pretrain stage hands on, and where it comes from (for the error).
struct PretrainedModel {
  nlohmann::json block;
  std::string origin;
};

PretrainedModel model_of(const workflow::StageInstance& pretrain) {
  const std::string from = other_run(pretrain.params, "from");
  if (from.empty())
    return {pretrain.params.at("model"), "the model of stage '" + pretrain.id + "'"};
  const nlohmann::json m = finished_stage(from, "pretrain", "stage '" + pretrain.id + "': from");
  return {m.at("results").at("model"),
          "the checkpoint's model (" + m.at("dir").get<std::string>() + ")"};
}

}  // namespace

void check_finetune_plan(const workflow::StageInstance& instance, const workflow::Workflow& wf) {
  const std::string task = instance.params.value("task", "beats");
  if (task != "af" && task != "record") return;
  const workflow::StageInstance* pretrain = needed_pretrain(instance, wf);
  if (!pretrain) return;  // fine-tuning refuses a missing pretrain stage itself
  const PretrainedModel model = model_of(*pretrain);
  if (!model.block.contains("context") || !model.block.at("context").is_number_integer()) return;
  const int64_t context = model.block.at("context");
  const int64_t length = instance.params.at("segment_beats");
  if (length < 2 || length > context)
    throw ConfigError(
        "{}:{}: stage '{}': segment_beats={} must be 2 to the context ({}) of {}, which it "
        "fine-tunes; give segment_beats from 2 to {} (each value of a matrix)",
        instance.file, instance.line, instance.id, length, context, model.origin, context);
}

}  // namespace hlm
