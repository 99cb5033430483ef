// GPT forward pass: embeddings, the shared blocks under a causal bias, a final LayerNorm. The
// loss is computed by the trainer in float32.
#include "gpt.h"

#include "hlm/gemm.h"
#include "hlm/model.h"

namespace hlm::gpt {

GptImpl::GptImpl(const GptOptions& o) : options_(o) {
  TORCH_CHECK(o.d_model() % o.n_head() == 0, "d_model (", o.d_model(),
              ") must be divisible by n_head (", o.n_head(), ")");
  tok_ = register_module("tok", torch::nn::Embedding(o.vocab_size(), o.d_model()));
  pos_ = register_module("pos", torch::nn::Embedding(o.context(), o.d_model()));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < o.n_layer(); ++i) blocks_->push_back(TransformerBlock(o));
  ln_f_ = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model()})));
  hlm::init_gpt2_weights(*this);
  causal_.causal_bias = torch::full({o.context(), o.context()}, -INFINITY).triu(1);
}

at::Tensor GptImpl::hidden(const at::Tensor& tokens) {
  const int64_t t = tokens.size(1);
  TORCH_CHECK(t <= options_.context(), "sequence of ", t, " tokens exceeds the context of ",
              options_.context());
  // The written-out attention adds this mask: kept on the tokens' device, so no forward copies
  // it from the host (a CUDA graph's capture cannot).
  if (causal_.causal_bias.device() != tokens.device())
    causal_.causal_bias = causal_.causal_bias.to(tokens.device());
  auto positions = torch::arange(t, tokens.options().dtype(torch::kLong));
  auto x = tok_(tokens) + pos_(positions);
  for (const auto& block : *blocks_) x = block->as<TransformerBlock>()->forward(x, causal_);
  return ln_f_(x);
}

at::Tensor GptImpl::logits(const at::Tensor& hidden) { return hlm::linear(hidden, tok_->weight); }

}  // namespace hlm::gpt
