// The transformer block's fused scaled-dot-product attention against the products and softmax
// written out: same outputs and gradients (float32 summation order apart) with a causal mask,
// with padded keys and with neither.
#include <gtest/gtest.h>

#include "hlm/transformer.h"

namespace {

hlm::TransformerOptions options(const char* attention) {
  return hlm::TransformerOptions().d_model(64).n_head(4).d_ff(128).attention(attention);
}

// Runs one block of each kind, with the same weights, on the same input; compares the output
// and the gradients of the input and of every weight.
void expect_same(const hlm::AttentionMask& mask, int64_t t) {
  torch::manual_seed(7);
  hlm::TransformerBlock fused(options("fused")), written(options("written"));
  {
    torch::NoGradGuard no_grad;
    auto from = written->parameters();
    auto to = fused->parameters();
    for (size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  const at::Tensor x = torch::randn({3, t, 64});
  at::Tensor x1 = x.clone().requires_grad_(), x2 = x.clone().requires_grad_();
  const at::Tensor y1 = fused->forward(x1, mask), y2 = written->forward(x2, mask);
  EXPECT_LT((y1 - y2).abs().max().item<double>(), 1e-5);
  const at::Tensor weights = torch::randn(y1.sizes());
  (y1 * weights).sum().backward();
  (y2 * weights).sum().backward();
  EXPECT_LT((x1.grad() - x2.grad()).abs().max().item<double>(), 1e-4);
  auto g1 = fused->parameters(), g2 = written->parameters();
  for (size_t i = 0; i < g1.size(); ++i)
    EXPECT_LT((g1[i].grad() - g2[i].grad()).abs().max().item<double>(), 1e-4) << "parameter " << i;
}

TEST(FusedAttention, MatchesTheWrittenOutAttentionUnderACausalMask) {
  for (int64_t t : {41, 128}) {
    hlm::AttentionMask mask;
    mask.causal_bias = torch::full({t, t}, -INFINITY).triu(1);
    expect_same(mask, t);
  }
}

TEST(FusedAttention, MatchesTheWrittenOutAttentionWithPaddedKeys) {
  const int64_t t = 50;
  hlm::AttentionMask mask;
  mask.key_padding = torch::zeros({3, 1, 1, t}, torch::kBool);
  mask.key_padding.index_put_({1, 0, 0, torch::indexing::Slice(30, t)}, true);
  mask.key_padding.index_put_({2, 0, 0, torch::indexing::Slice(5, t)}, true);
  expect_same(mask, t);
}

TEST(FusedAttention, MatchesTheWrittenOutAttentionWithoutAMask) {
  expect_same(hlm::AttentionMask(), 64);
}

TEST(FusedAttention, AutoWritesAttentionOutForBf16OnTheCpuOnly) {
  const at::Tensor q = torch::zeros({1, 1, 4, 4});
  EXPECT_TRUE(hlm::use_fused_attention("auto", q));
  EXPECT_FALSE(hlm::use_fused_attention("auto", q.to(torch::kBFloat16)));
  EXPECT_TRUE(hlm::use_fused_attention("fused", q.to(torch::kBFloat16)));
  EXPECT_FALSE(hlm::use_fused_attention("written", q));
}

}  // namespace
