// Parameters shared by the stages that train (pretrain, finetune, scale-analysis).
#pragma once
#include <vector>

#include "workflow/workflow.h"

namespace hlm {

// Which training loop reads the params: fine-tuning runs on one rank and has no held-out
// language-model loss, so it declares no bucket size, held-out split or profiler step.
enum class TrainingStage { kLanguageModel, kFineTune };

// steps, batch, lr, warmup, weight decay, clipping, accumulation, bf16, seed, threads, ...
std::vector<workflow::ParamSpec> training_param_specs(
    const char* default_steps, const char* default_lr,
    TrainingStage stage = TrainingStage::kLanguageModel);
// The training params of a stage, as a TrainOptions JSON block.
nlohmann::json training_options_json(const nlohmann::json& params);

// The `device` param of the stages that run a model (pretrain, finetune, evaluate,
// scale-analysis): not a training option; TrainOptions carries it to the ranks.
workflow::ParamSpec device_param_spec();
// StageKind::preflight of those stages: resolves `device` on this machine and refuses, before
// any work, one that cannot run here (cuda with no GPU visible; the nccl backend on the CPU).
void check_training_device(const workflow::StageInstance& instance);

}  // namespace hlm
