// A RoBERTa-style encoder for masked-token pretraining: bidirectional attention with PAD keys
// masked out, learned positions, pre-LayerNorm blocks, output head tied to the token embedding.
#pragma once
#include <torch/torch.h>

namespace hlm::bert {

struct BertOptions {
  TORCH_ARG(int64_t, vocab_size) = 512;
  TORCH_ARG(int64_t, context) = 128;
  TORCH_ARG(int64_t, d_model) = 256;
  TORCH_ARG(int64_t, n_layer) = 4;
  TORCH_ARG(int64_t, n_head) = 4;
  TORCH_ARG(int64_t, d_ff) = 1024;
  TORCH_ARG(double, dropout) = 0.0;
  TORCH_ARG(double, mask_probability) = 0.15;  // read by the trainer, not by the network
};

class EncoderBlockImpl : public torch::nn::Module {
 public:
  explicit EncoderBlockImpl(const BertOptions& options);
  // x: [B, T, D]; key_padding: [B, 1, 1, T] bool, true for keys to ignore, or undefined.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& key_padding);

 private:
  int64_t n_head_;
  double dropout_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, fc_{nullptr}, out_{nullptr};
};
TORCH_MODULE(EncoderBlock);

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
