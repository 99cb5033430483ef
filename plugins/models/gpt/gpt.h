// The reference heart language model: a pre-LayerNorm GPT decoder with learned positions
// and an output head tied to the token embedding (../shared/spec/hlm-gpt-small.yaml).
#pragma once
#include <torch/torch.h>

#include "hlm/transformer.h"

namespace hlm::gpt {

using GptOptions = TransformerOptions;

class GptImpl : public torch::nn::Module {
 public:
  explicit GptImpl(const GptOptions& options);
  at::Tensor hidden(const at::Tensor& tokens);  // [B, T] -> [B, T, D]
  at::Tensor logits(const at::Tensor& hidden);  // [B, T, D] -> [B, T, V], tied head
  const GptOptions& options() const { return options_; }

 private:
  GptOptions options_;
  torch::nn::Embedding tok_{nullptr}, pos_{nullptr};
  torch::nn::ModuleList blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
  AttentionMask causal_;  // a causal bias only: not a parameter or buffer, nothing to save
};
TORCH_MODULE(Gpt);

}  // namespace hlm::gpt
