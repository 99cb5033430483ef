// Hyper-parameters of a training run. Each is declared once, in train_fields(): its name,
// workflow type (with its range), default, help, and which stages declare it; the stages'
// param specs (stages/train_params.h), TrainOptions' defaults, from_params and to_json all
// read that table.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace hlm {

struct TrainOptions {
  int64_t steps, batch, accumulation;  // optimizer steps; sequences per rank per micro-step
  double lr, min_lr_ratio;             // peak; cosine decays to lr * min_lr_ratio
  int64_t warmup_steps;
  double weight_decay, beta1, beta2, eps;
  double grad_clip;  // max global L2 norm; 0 = off
  bool bf16;         // bf16 autocast for the forward pass
  uint64_t seed;
  int threads;           // intra-op threads per rank
  bool bind_cores;       // ranks sharing a host keep to disjoint cores (core_binding.h)
  double bucket_cap_mb;  // gradient all-reduce bucket size (small enough to overlap)
  int64_t eval_batches;
  double holdout_fraction;  // tail of the token stream kept for evaluation
  int64_t log_every;
  int64_t checkpoint_every;   // steps between checkpoints; 0 = only on a stop signal
  bool resume;                // continue from the newest complete checkpoint
  int keep_checkpoints;       // newest complete checkpoints kept (0 = all)
  int64_t max_skipped_steps;  // non-finite steps skipped before the run stops
  int64_t timing_skip_steps;  // steps left out of the median step time; -1 = automatic
  bool save_weights;          // write model.pt at the end
  int64_t profile_step;       // step recorded by LibTorch's profiler (0 = none)
  double mask_probability;    // masked objective: share of content tokens predicted
  std::string device;         // the stage's device param: cpu, cuda or auto
  bool cuda_graph;            // replay each micro-batch's forward and backward (step_graph.h)

  TrainOptions();  // every field at its default in train_fields()
  static TrainOptions from_params(const nlohmann::json& params);
  // Every field, under its param name: what a run actually used.
  nlohmann::json to_json() const;
};

// Which stages declare a field as a param.
enum class TrainFieldScope {
  kTraining,           // every training stage (pretrain, finetune, scale-analysis)
  kLanguageModelOnly,  // pretrain and scale-analysis: fine-tuning's loop has no use for it
  kDevice,             // every stage that runs a model, evaluate too (device_param_spec)
  kInternal,           // no stage: set by code (the bert plugin's masking rate, benchmarks)
};

using TrainMember =
    std::variant<int64_t TrainOptions::*, int TrainOptions::*, uint64_t TrainOptions::*,
                 double TrainOptions::*, bool TrainOptions::*, std::string TrainOptions::*>;

struct TrainField {
  const char* name;
  const char* type;          // the workflow type, with its range ("int[1,]")
  const char* default_json;  // the default, as JSON
  const char* help;
  TrainFieldScope scope;
  TrainMember member;
};

// Every field of TrainOptions, in the order the stages declare them.
const std::vector<TrainField>& train_fields();
const TrainField& train_field(const std::string& name);  // throws InternalError if none

// The learning rate at `step`: linear warm-up, then cosine decay to lr * min_lr_ratio.
double learning_rate_at(const TrainOptions& options, int64_t step);

}  // namespace hlm
