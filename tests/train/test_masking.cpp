// Masked-LM corruption: which tokens are chosen, the 80/10/10 split, special tokens left
// alone, ignored targets elsewhere, and the same result for the same seed.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "hlm/tokenizer.h"
#include "train/masking.h"

namespace {

constexpr int64_t kVocab = 64;

at::Tensor content_tokens(int64_t rows, int64_t cols, uint64_t seed = 5) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randint(int64_t(hlm::kFirstContentToken), kVocab, {rows, cols}, gen, torch::kLong);
}

double share(const at::Tensor& flags, const at::Tensor& among) {
  return flags.logical_and(among).sum().item<double>() / among.sum().item<double>();
}

TEST(Masking, ChoosesAboutTheGivenShareOfContentTokens) {
  const auto tokens = content_tokens(400, 500);
  const auto masked = hlm::mask_tokens(tokens, 0.15, kVocab, uint64_t(1));
  const double chosen =
      masked.targets.ne(hlm::kIgnoreTarget).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(chosen, 0.15, 0.003);
}

TEST(Masking, ReplacesChosenTokensWithMaskRandomOrThemselves80To10To10) {
  const auto tokens = content_tokens(400, 500);
  const auto masked = hlm::mask_tokens(tokens, 1.0, kVocab, uint64_t(2));
  const auto all = torch::ones_like(tokens, torch::kBool);
  ASSERT_TRUE(masked.targets.ne(hlm::kIgnoreTarget).all().item<bool>());
  const auto is_mask = masked.inputs.eq(int64_t(hlm::kMask));
  const auto kept = masked.inputs.eq(tokens);
  const auto random = is_mask.logical_or(kept).logical_not();
  // A random replacement equal to the original counts as kept: 1 in (kVocab - 4) of 10 %.
  const double collide = 0.1 / double(kVocab - hlm::kFirstContentToken);
  EXPECT_NEAR(share(is_mask, all), 0.8, 0.004);
  EXPECT_NEAR(share(kept, all), 0.1 + collide, 0.003);
  EXPECT_NEAR(share(random, all), 0.1 - collide, 0.003);
  EXPECT_TRUE(
      masked.inputs.ge(int64_t(hlm::kFirstContentToken)).logical_or(is_mask).all().item<bool>());
  EXPECT_TRUE(masked.inputs.lt(kVocab).all().item<bool>());
}

TEST(Masking, NeverChoosesPadBosMaskOrUnk) {
  auto tokens = content_tokens(50, 40);
  for (int64_t col = 0; col < 40; col += 2) tokens.select(1, col).fill_(col / 2 % 4);  // specials
  const auto special = tokens.lt(int64_t(hlm::kFirstContentToken));
  const auto masked = hlm::mask_tokens(tokens, 1.0, kVocab, uint64_t(3));
  EXPECT_TRUE(masked.targets.masked_select(special).eq(hlm::kIgnoreTarget).all().item<bool>());
  EXPECT_TRUE(torch::equal(masked.inputs.masked_select(special), tokens.masked_select(special)));
  EXPECT_TRUE(masked.targets.masked_select(special.logical_not()).ge(4).all().item<bool>());
}

TEST(Masking, TargetsHoldTheOriginalTokenWhereChosenAndIgnoreElsewhere) {
  const auto tokens = content_tokens(30, 41);
  const auto masked = hlm::mask_tokens(tokens, 0.3, kVocab, uint64_t(4));
  const auto chosen = masked.targets.ne(hlm::kIgnoreTarget);
  EXPECT_TRUE(torch::equal(masked.targets.masked_select(chosen), tokens.masked_select(chosen)));
  EXPECT_TRUE(torch::equal(masked.inputs.masked_select(chosen.logical_not()),
                           tokens.masked_select(chosen.logical_not())));
  EXPECT_EQ(masked.inputs.sizes(), tokens.sizes());
  EXPECT_EQ(masked.inputs.scalar_type(), torch::kLong);
  EXPECT_EQ(masked.targets.scalar_type(), torch::kLong);
}

TEST(Masking, GivesTheSameBatchForTheSameSeedOrGeneratorStateAndAnotherForAnotherSeed) {
  const auto tokens = content_tokens(16, 128);
  const auto a = hlm::mask_tokens(tokens, 0.15, kVocab, uint64_t(7));
  const auto b = hlm::mask_tokens(tokens, 0.15, kVocab, uint64_t(7));
  const auto c = hlm::mask_tokens(tokens, 0.15, kVocab, uint64_t(8));
  EXPECT_TRUE(torch::equal(a.inputs, b.inputs));
  EXPECT_TRUE(torch::equal(a.targets, b.targets));
  EXPECT_FALSE(torch::equal(a.targets, c.targets));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const auto d = hlm::mask_tokens(tokens, 0.15, kVocab, gen);
  EXPECT_TRUE(torch::equal(a.inputs, d.inputs));
  const auto e = hlm::mask_tokens(tokens, 0.15, kVocab, gen);  // the generator moved on
  EXPECT_FALSE(torch::equal(d.targets, e.targets));
}

TEST(Masking, ChoosesOneContentTokenWhenTheDrawChoosesNone) {
  auto tokens = torch::tensor({{int64_t(hlm::kBos), int64_t(9), int64_t(10), int64_t(hlm::kPad)}});
  const auto masked = hlm::mask_tokens(tokens, 1e-9, kVocab, uint64_t(5));
  const auto chosen = masked.targets.ne(hlm::kIgnoreTarget);
  EXPECT_EQ(chosen.sum().item<int64_t>(), 1);
  EXPECT_TRUE(chosen[0][1].item<bool>() || chosen[0][2].item<bool>());
}

TEST(Masking, RefusesAProbabilityOutsideZeroToOne) {
  const auto tokens = content_tokens(2, 8);
  EXPECT_THROW(hlm::mask_tokens(tokens, 0.0, kVocab, uint64_t(1)), c10::Error);
  EXPECT_THROW(hlm::mask_tokens(tokens, 1.5, kVocab, uint64_t(1)), c10::Error);
}

}  // namespace
