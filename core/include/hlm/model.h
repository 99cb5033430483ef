// Model plugins: a LibTorch module that maps token ids to hidden states and hidden states to
// vocabulary logits. The trainer adds objectives (causal or masked LM) and heads (fine-tune).
#pragma once
#include <torch/torch.h>

#include "hlm/plugin.h"

namespace hlm {

enum class Objective { kCausal, kMasked };

class Model {
 public:
  virtual ~Model() = default;
  // The module that owns every parameter (for optimizers, checkpoints, all-reduce).
  virtual torch::nn::Module& module() = 0;
  // [batch, time] int64 token ids -> [batch, time, d_model].
  virtual at::Tensor hidden(const at::Tensor& tokens) = 0;
  // [batch, time, d_model] -> [batch, time, vocab] logits.
  virtual at::Tensor logits(const at::Tensor& hidden) = 0;
  virtual Objective objective() const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual int64_t context() const = 0;
  virtual int64_t d_model() const = 0;
  // FLOPs per trained token (forward + backward), for MFU.
  virtual double flops_per_token() const = 0;
};

}  // namespace hlm
