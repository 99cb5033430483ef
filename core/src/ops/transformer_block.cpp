// The shared transformer block (see hlm/transformer.h): attention through PyTorch's fused
// scaled-dot-product attention, or written out (the `attention` param).
#include <cmath>

#include "hlm/activations.h"
#include "hlm/errors.h"
#include "hlm/gemm.h"
#include "hlm/transformer.h"

namespace hlm {

namespace F = torch::nn::functional;

TransformerOptions transformer_options_from(const nlohmann::json& p) {
  TransformerOptions o;
  o.vocab_size(p.at("vocab_size").get<int64_t>())
      .context(p.at("context").get<int64_t>())
      .d_model(p.at("d_model").get<int64_t>())
      .n_layer(p.at("n_layer").get<int64_t>())
      .n_head(p.at("n_head").get<int64_t>())
      .d_ff(p.at("d_ff").get<int64_t>())
      .dropout(p.at("dropout").get<double>())
      .attention(p.value("attention", "auto"));
  if (o.attention() != "auto" && o.attention() != "fused" && o.attention() != "written")
    throw ConfigError("model attention '{}' is not one of auto, fused, written", o.attention());
  return o;
}

bool use_fused_attention(const std::string& mode, const at::Tensor& q) {
  if (mode != "auto") return mode == "fused";
  return !(q.is_cpu() && q.scalar_type() == at::kBFloat16);
}

TransformerBlockImpl::TransformerBlockImpl(const TransformerOptions& o)
    : n_head_(o.n_head()), dropout_(o.dropout()), attention_(o.attention()) {
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  qkv_ = register_module("qkv", torch::nn::Linear(o.d_model(), 3 * o.d_model()));
  proj_ = register_module("proj", torch::nn::Linear(o.d_model(), o.d_model()));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  fc_ = register_module("fc", torch::nn::Linear(o.d_model(), o.d_ff()));
  out_ = register_module("out", torch::nn::Linear(o.d_ff(), o.d_model()));
}

at::Tensor TransformerBlockImpl::forward(const at::Tensor& x, const AttentionMask& mask) {
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2), hd = d / n_head_;
  // unbind, not three selects: its backward stacks the three gradients in one pass, where
  // each select's backward zero-fills a whole qkv-sized tensor and the three are then summed.
  const auto qkv = hlm::linear(ln1_(x), qkv_->weight, qkv_->bias)
                       .view({b, t, 3, n_head_, hd})
                       .permute({2, 0, 3, 1, 4})
                       .unbind(0);
  // Both masks at once is no model's case: the written-out path combines them.
  const bool fused = use_fused_attention(attention_, qkv[0]) &&
                     !(mask.causal_bias.defined() && mask.key_padding.defined());
  const at::Tensor y = fused ? fused_attention(qkv[0], qkv[1], qkv[2], mask)
                             : explicit_attention(qkv[0], qkv[1], qkv[2], mask);
  auto h = x + hlm::linear(y.transpose(1, 2).reshape({b, t, d}), proj_->weight, proj_->bias);
  auto f = hlm::gelu(hlm::linear(ln2_(h), fc_->weight, fc_->bias));
  return h + hlm::linear(f, out_->weight, out_->bias);
}

at::Tensor TransformerBlockImpl::fused_attention(const at::Tensor& q, const at::Tensor& k,
                                                 const at::Tensor& v, const AttentionMask& mask) {
  // SDPA's boolean mask says which keys take part: the opposite of key_padding.
  std::optional<at::Tensor> keys;
  if (mask.key_padding.defined()) keys = mask.key_padding.logical_not();
  const double dropout = dropout_ > 0 && is_training() ? dropout_ : 0.0;
  return at::scaled_dot_product_attention(q, k, v, keys, dropout,
                                          /*is_causal=*/mask.causal_bias.defined());
}

at::Tensor TransformerBlockImpl::explicit_attention(const at::Tensor& q4, const at::Tensor& k4,
                                                    const at::Tensor& v4,
                                                    const AttentionMask& mask) {
  const int64_t b = q4.size(0), t = q4.size(2), hd = q4.size(3);
  auto q = q4.reshape({b * n_head_, t, hd});
  auto k = k4.reshape({b * n_head_, t, hd});
  auto v = v4.reshape({b * n_head_, t, hd});
  const double scale = 1.0 / std::sqrt(double(hd));
  // With a causal bias one GEMM computes scale * q k^T + bias (0 or -inf): no separate
  // scaling and masking passes, and one [B*H, T, T] tensor less kept for backward.
  const at::Tensor bias =
      mask.causal_bias.defined()
          ? mask.causal_bias.slice(0, 0, t).slice(1, 0, t).to(q.device(), /*non_blocking=*/true)
          : at::Tensor();
  auto att = gemm(q, k, /*transpose_a=*/false, /*transpose_b=*/true, scale, bias);
  if (mask.key_padding.defined())
    att = att.view({b, n_head_, t, t})
              .masked_fill(mask.key_padding, -INFINITY)
              .view({b * n_head_, t, t});
  att = att.softmax(-1);
  if (dropout_ > 0 && is_training()) att = F::dropout(att, F::DropoutFuncOptions().p(dropout_));
  return gemm(att, v, false, false).view({b, n_head_, t, hd});
}

}  // namespace hlm
