// Encoder forward pass: the shared blocks under a key-padding mask. Pre-LayerNorm rather than
// BERT's post-LN: it trains stably without a long learning-rate warm-up, and matches the gpt
// plugin so the two compare like for like.
#include "bert.h"

#include "hlm/cuda_graph.h"
#include "hlm/gemm.h"
#include "hlm/model.h"
#include "hlm/tokenizer.h"

namespace hlm::bert {

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
  for (int64_t i = 0; i < o.n_layer(); ++i) blocks_->push_back(TransformerBlock(o));
  ln_f_ = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  hlm::init_gpt2_weights(*this);
}

at::Tensor BertImpl::hidden(const at::Tensor& tokens) {
  const int64_t b = tokens.size(0), t = tokens.size(1);
  TORCH_CHECK(t <= options_.context(), "sequence of ", t, " tokens exceeds the context of ",
              options_.context());
  AttentionMask mask;  // key_padding undefined when nothing is padded: no masking work at all
  const at::Tensor pad = tokens.eq(int64_t(kPad));
  if (hlm::graph_safe_forward() || pad.any().item<bool>()) {
    // An all-PAD row would softmax over -inf only (NaN); let it attend to itself instead.
    mask.key_padding =
        pad.logical_and(pad.all(1, /*keepdim=*/true).logical_not()).view({b, 1, 1, t});
  }
  auto positions = torch::arange(t, tokens.options().dtype(torch::kLong));
  auto x = tok_(tokens) + pos_(positions);
  for (const auto& block : *blocks_) x = block->as<TransformerBlock>()->forward(x, mask);
  return ln_f_(x);
}

at::Tensor BertImpl::logits(const at::Tensor& hidden) { return hlm::linear(hidden, tok_->weight); }

}  // namespace hlm::bert
