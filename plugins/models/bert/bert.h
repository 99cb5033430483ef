// A RoBERTa-style encoder for masked-token pretraining: bidirectional attention with PAD keys
// masked out, learned positions, pre-LayerNorm blocks, output head tied to the token embedding.
#pragma once
#include <torch/torch.h>

#include "hlm/transformer.h"

namespace hlm::bert {

struct BertOptions : TransformerOptions {
  TORCH_ARG(double, mask_probability) = 0.15;  // read by the trainer, not by the network
};

class BertImpl : public torch::nn::Module {
 public:
  explicit BertImpl(const BertOptions& options);
  // [B, T] int64 -> [B, T, D]. PAD tokens (hlm::kPad) are never attended to; a sequence of
  // PAD alone attends to all of itself, which keeps it finite (its targets are ignored).
  at::Tensor hidden(const at::Tensor& tokens);
  at::Tensor logits(const at::Tensor& hidden);  // [B, T, D] -> [B, T, V], tied head
  const BertOptions& options() const { return options_; }

 private:
  BertOptions options_;
  torch::nn::Embedding tok_{nullptr}, pos_{nullptr};
  torch::nn::ModuleList blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
};
TORCH_MODULE(Bert);

}  // namespace hlm::bert
