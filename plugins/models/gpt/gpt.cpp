// GPT forward pass. Attention is written out (LibTorch 1.13 has no fused scaled-dot-product
// attention); the loss is computed by the trainer in float32.
#include "gpt.h"

#include "hlm/activations.h"
#include "hlm/gemm.h"
#include "hlm/model.h"

#include <cmath>

namespace hlm::gpt {

namespace F = torch::nn::functional;

BlockImpl::BlockImpl(const GptOptions& o) : n_head_(o.n_head()), dropout_(o.dropout()) {
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  qkv_ = register_module("qkv", torch::nn::Linear(o.d_model(), 3 * o.d_model()));
  proj_ = register_module("proj", torch::nn::Linear(o.d_model(), o.d_model()));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  fc_ = register_module("fc", torch::nn::Linear(o.d_model(), o.d_ff()));
  out_ = register_module("out", torch::nn::Linear(o.d_ff(), o.d_model()));
}

at::Tensor BlockImpl::forward(const at::Tensor& x, const at::Tensor& causal_bias) {
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2), hd = d / n_head_;
  // unbind, not three selects: its backward stacks the three gradients in one pass, where
  // each select's backward zero-fills a whole qkv-sized tensor and the three are then summed.
  const auto qkv = hlm::linear(ln1_(x), qkv_->weight, qkv_->bias)
                       .view({b, t, 3, n_head_, hd})
                       .permute({2, 0, 3, 1, 4})
                       .unbind(0);
  auto q = qkv[0].reshape({b * n_head_, t, hd});
  auto k = qkv[1].reshape({b * n_head_, t, hd});
  auto v = qkv[2].reshape({b * n_head_, t, hd});
  // One GEMM computes scale * q k^T + causal bias (0 or -inf): no separate scaling and
  // masking passes, and one [B*H, T, T] tensor less kept for backward.
  auto att = gemm(q, k, /*transpose_a=*/false, /*transpose_b=*/true, 1.0 / std::sqrt(double(hd)),
                  causal_bias.slice(0, 0, t).slice(1, 0, t))
                 .softmax(-1);
  if (dropout_ > 0 && is_training()) att = F::dropout(att, F::DropoutFuncOptions().p(dropout_));
  auto y = gemm(att, v, false, false).view({b, n_head_, t, hd}).transpose(1, 2).reshape({b, t, d});
  auto h = x + hlm::linear(y, proj_->weight, proj_->bias);
  auto f = hlm::gelu(hlm::linear(ln2_(h), fc_->weight, fc_->bias));
  return h + hlm::linear(f, out_->weight, out_->bias);
}

GptImpl::GptImpl(const GptOptions& o) : options_(o) {
  TORCH_CHECK(o.d_model() % o.n_head() == 0, "d_model (", o.d_model(),
              ") must be divisible by n_head (", o.n_head(), ")");
  tok_ = register_module("tok", torch::nn::Embedding(o.vocab_size(), o.d_model()));
  pos_ = register_module("pos", torch::nn::Embedding(o.context(), o.d_model()));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.n_layer(); ++i) blocks_->push_back(Block(o));
  ln_f_ = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  hlm::init_gpt2_weights(*this);
  causal_bias_ = torch::full({o.context(), o.context()}, -INFINITY).triu(1);
}

at::Tensor GptImpl::hidden(const at::Tensor& tokens) {
  const int64_t t = tokens.size(1);
  TORCH_CHECK(t <= options_.context(), "sequence of ", t, " tokens exceeds the context of ",
              options_.context());
  auto positions = torch::arange(t, tokens.options().dtype(torch::kLong));
  auto x = tok_(tokens) + pos_(positions);
  for (const auto& block : *blocks_) x = block->as<Block>()->forward(x, causal_bias_);
  return ln_f_(x);
}

at::Tensor GptImpl::logits(const at::Tensor& hidden) {
  return hlm::linear(hidden, tok_->weight);
}

}  // namespace hlm::gpt
