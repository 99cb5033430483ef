// The reference heart language model: a pre-LayerNorm GPT decoder with learned positions
// and an output head tied to the token embedding (../shared/spec/hlm-gpt-small.yaml).
#pragma once
#include <torch/torch.h>

namespace hlm::gpt {

struct GptOptions {
  TORCH_ARG(int64_t, vocab_size) = 512;
  TORCH_ARG(int64_t, context) = 128;
  TORCH_ARG(int64_t, d_model) = 256;
  TORCH_ARG(int64_t, n_layer) = 4;
  TORCH_ARG(int64_t, n_head) = 4;
  TORCH_ARG(int64_t, d_ff) = 1024;
  TORCH_ARG(double, dropout) = 0.0;
};

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const GptOptions& options);
  // x: [B, T, D]; causal_bias: [T, T] float, -inf above the diagonal, 0 elsewhere.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& causal_bias);

 private:
  int64_t n_head_;
  double dropout_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, fc_{nullptr}, out_{nullptr};
};
TORCH_MODULE(Block);

class GptImpl : public torch::nn::Module {
 public:
  explicit GptImpl(const GptOptions& options);
  at::Tensor hidden(const at::Tensor& tokens);   // [B, T] -> [B, T, D]
  at::Tensor logits(const at::Tensor& hidden);   // [B, T, D] -> [B, T, V], tied head
  const GptOptions& options() const { return options_; }

 private:
  GptOptions options_;
  torch::nn::Embedding tok_{nullptr}, pos_{nullptr};
  torch::nn::ModuleList blocks_;
  torch::nn::LayerNorm ln_f_{nullptr};
  at::Tensor causal_bias_;  // not a parameter or buffer: nothing to all-reduce or save
};
TORCH_MODULE(Gpt);

}  // namespace hlm::gpt
