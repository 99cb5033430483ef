// Encoder forward pass. Pre-LayerNorm rather than BERT's post-LN: it trains stably without a
// long learning-rate warm-up, and matches the gpt plugin so the two compare like for like.
#include "bert.h"

#include "hlm/activations.h"
#include "hlm/gemm.h"
#include "hlm/model.h"

#include <cmath>

#include "hlm/tokenizer.h"

namespace hlm::bert {

namespace F = torch::nn::functional;

EncoderBlockImpl::EncoderBlockImpl(const BertOptions& o)
    : n_head_(o.n_head()), dropout_(o.dropout()) {
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  qkv_ = register_module("qkv", torch::nn::Linear(o.d_model(), 3 * o.d_model()));
  proj_ = register_module("proj", torch::nn::Linear(o.d_model(), o.d_model()));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  fc_ = register_module("fc", torch::nn::Linear(o.d_model(), o.d_ff()));
  out_ = register_module("out", torch::nn::Linear(o.d_ff(), o.d_model()));
}

at::Tensor EncoderBlockImpl::forward(const at::Tensor& x, const at::Tensor& key_padding) {
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2), hd = d / n_head_;
  auto qkv = hlm::linear(ln1_(x), qkv_->weight, qkv_->bias)
                 .view({b, t, 3, n_head_, hd})
                 .permute({2, 0, 3, 1, 4})
                 .unbind(0);  // one stacking backward instead of three zero-filled selects
  // [B*H, T, hd] each
  auto q = qkv[0].reshape({b * n_head_, t, hd}), k = qkv[1].reshape({b * n_head_, t, hd}),
       v = qkv[2].reshape({b * n_head_, t, hd});
  auto att = gemm(q, k, false, /*transpose_b=*/true, 1.0 / std::sqrt(double(hd)))
                 .view({b, n_head_, t, t});
  if (key_padding.defined()) att = att.masked_fill(key_padding, -INFINITY);
  att = att.softmax(-1);
  if (dropout_ > 0 && is_training()) att = F::dropout(att, F::DropoutFuncOptions().p(dropout_));
  auto y = gemm(att.reshape({b * n_head_, t, t}), v, false, false)
               .view({b, n_head_, t, hd})
               .transpose(1, 2)
               .reshape({b, t, d});
  auto h = x + hlm::linear(y, proj_->weight, proj_->bias);
  auto f = hlm::gelu(hlm::linear(ln2_(h), fc_->weight, fc_->bias));
  return h + hlm::linear(f, out_->weight, out_->bias);
}

BertImpl::BertImpl(const BertOptions& o) : options_(o) {
  TORCH_CHECK(o.d_model() % o.n_head() == 0, "d_model (", o.d_model(),
              ") must be divisible by n_head (", o.n_head(), ")");
  TORCH_CHECK(o.vocab_size() > int64_t(kFirstContentToken), "vocab_size (", o.vocab_size(),
              ") must leave room for content tokens after the ", kFirstContentToken,
              " special ones");
  TORCH_CHECK(o.mask_probability() > 0 && o.mask_probability() <= 1, "mask_probability (",
              o.mask_probability(), ") must be in (0, 1]");
  tok_ = register_module("tok", torch::nn::Embedding(o.vocab_size(), o.d_model()));
  pos_ = register_module("pos", torch::nn::Embedding(o.context(), o.d_model()));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.n_layer(); ++i) blocks_->push_back(EncoderBlock(o));
  ln_f_ = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  hlm::init_gpt2_weights(*this);
}

at::Tensor BertImpl::hidden(const at::Tensor& tokens) {
  const int64_t b = tokens.size(0), t = tokens.size(1);
  TORCH_CHECK(t <= options_.context(), "sequence of ", t, " tokens exceeds the context of ",
              options_.context());
  at::Tensor key_padding;  // undefined when nothing is padded: no masking work at all
  const at::Tensor pad = tokens.eq(int64_t(kPad));
  if (pad.any().item<bool>()) {
    // An all-PAD row would softmax over -inf only (NaN); let it attend to itself instead.
    key_padding = pad.logical_and(pad.all(1, /*keepdim=*/true).logical_not()).view({b, 1, 1, t});
  }
  auto positions = torch::arange(t, tokens.options().dtype(torch::kLong));
  auto x = tok_(tokens) + pos_(positions);
  for (const auto& block : *blocks_) x = block->as<EncoderBlock>()->forward(x, key_padding);
  return ln_f_(x);
}

at::Tensor BertImpl::logits(const at::Tensor& hidden) {
  return hlm::linear(hidden, tok_->weight);
}

}  // namespace hlm::bert
