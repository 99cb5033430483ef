// The registry of built-in stage kinds, and input lookup helpers.
#include "engine/stage.h"
#include "hlm/errors.h"

namespace hlm {

const std::vector<StageKind>& stage_kinds() {
  static const std::vector<StageKind> kinds = {tokenize_stage(), pretrain_stage(), finetune_stage(),
                                               evaluate_stage(), scale_analysis_stage()};
  return kinds;
}

const StageKind& stage_kind(const std::string& kind) {
  for (const auto& k : stage_kinds())
    if (k.kind == kind) return k;
  throw InternalError("no stage kind '{}'", kind);
}

void check_plan(const workflow::Workflow& wf) {
  for (const auto& instance : wf.stages)
    if (const auto& check = stage_kind(instance.kind).check_plan) check(instance, wf);
}

std::vector<const nlohmann::json*> StageContext::inputs_of_kind(const std::string& kind) const {
  std::vector<const nlohmann::json*> out;
  for (const auto& id : instance.needs) {
    auto it = inputs.find(id);
    if (it != inputs.end() && it->second.value("kind", "") == kind) out.push_back(&it->second);
  }
  return out;
}

const nlohmann::json& StageContext::input_of_kind(const std::string& kind) const {
  auto found = inputs_of_kind(kind);
  if (found.empty())
    throw ConfigError(
        "{}:{}:{}: stage '{}' ({}) needs a '{}' stage; add its id to this stage's needs",
        instance.file, instance.line, instance.column, instance.id, instance.kind, kind);
  return *found.front();
}

}  // namespace hlm
