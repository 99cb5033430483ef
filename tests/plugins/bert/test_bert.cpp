// The bert model plugin: masked objective, bidirectional attention that ignores PAD, context
// windows 41..1024, and a masked-LM loss that falls within a few training steps.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <iostream>
#include <numeric>

#include "hlm/tokenizer.h"
#include "support/model_plugins.h"
#include "train/masking.h"

namespace {

using nlohmann::json;

const json kTiny = {
    {"vocab_size", 40}, {"d_model", 16}, {"n_layer", 1}, {"n_head", 2}, {"d_ff", 32}};

hlm::test::ModelPlugins& plugins() {
  static hlm::test::ModelPlugins instance;
  return instance;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(Bert, DeclaresTheMaskedObjectiveAndTheGptSizeWithItsDefaults) {
  auto model = plugins().make("bert");
  EXPECT_EQ(model->objective(), hlm::Objective::kMasked);
  EXPECT_EQ(hlm::test::parameter_count(*model), 3323392);
  EXPECT_GT(model->flops_per_token(), 0);
}

TEST(Bert, RunsEveryContextFrom41To1024AndRefusesLongerInput) {
  for (int64_t context : {41, 1024}) {
    json params = kTiny;
    params["context"] = context;
    auto model = plugins().make("bert", params);
    torch::NoGradGuard no_grad;
    const auto tokens = torch::randint(0, 40, {2, context}, torch::kLong);
    const auto logits = model->logits(model->hidden(tokens));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, context, 40})) << "context " << context;
    EXPECT_TRUE(logits.isfinite().all().item<bool>()) << "context " << context;
    EXPECT_THROW(model->hidden(torch::zeros({1, context + 1}, torch::kLong)), c10::Error);
  }
}

TEST(Bert, LetsEveryPositionSeeTokensOnBothSides) {
  auto model = plugins().make("bert", kTiny);
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randint(4, 40, {1, 50}, torch::kLong);
  auto changed = tokens.clone();
  changed[0][30] = (tokens[0][30].item<int64_t>() + 1 - 4) % 36 + 4;
  const auto a = model->hidden(tokens), b = model->hidden(changed);
  EXPECT_GT(max_abs_diff(a.slice(1, 0, 30), b.slice(1, 0, 30)), 1e-6);  // earlier positions too
}

TEST(Bert, GivesUnpaddedPositionsTheSameStatesWithOrWithoutTrailingPad) {
  auto model = plugins().make("bert", kTiny);
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randint(4, 40, {1, 45}, torch::kLong);
  const auto padded =
      torch::cat({tokens, torch::full({1, 10}, int64_t(hlm::kPad), torch::kLong)}, 1);
  const auto a = model->hidden(tokens), b = model->hidden(padded);
  EXPECT_LT(max_abs_diff(a, b.slice(1, 0, 45)), 1e-5);
}

TEST(Bert, StaysFiniteOnASequenceOfPadAlone) {
  auto model = plugins().make("bert", kTiny);
  torch::NoGradGuard no_grad;
  auto tokens = torch::randint(4, 40, {2, 41}, torch::kLong);
  tokens[1].fill_(int64_t(hlm::kPad));
  EXPECT_TRUE(model->logits(model->hidden(tokens)).isfinite().all().item<bool>());
}

// Each row repeats one random content token, so any unmasked token gives the masked ones away:
// the loss must fall well below chance (ln 20) within a few steps. Fresh masks every step.
TEST(Bert, LowersTheMaskedLmLossWithinAFewAdamWSteps) {
  torch::manual_seed(11);
  auto model = plugins().make("bert", {{"vocab_size", 24},
                                       {"context", 48},
                                       {"d_model", 32},
                                       {"n_layer", 2},
                                       {"n_head", 2},
                                       {"d_ff", 64}});
  torch::optim::AdamW optimizer(model->module().parameters(), torch::optim::AdamWOptions(3e-3));
  std::vector<double> losses;
  for (uint64_t step = 0; step < 30; ++step) {
    const auto tokens = torch::randint(4, 24, {16, 1}, torch::kLong).repeat({1, 48});
    const auto masked = hlm::mask_tokens(tokens, 0.15, 24, /*seed=*/step);
    const auto logits = model->logits(model->hidden(masked.inputs));
    auto loss =
        torch::nn::functional::cross_entropy(logits.view({-1, 24}), masked.targets.view({-1}));
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  const double first = losses.front();
  const double last = std::accumulate(losses.end() - 5, losses.end(), 0.0) / 5;
  std::cout << "[ bert ] masked-LM loss " << first << " -> " << last
            << " (mean of the last five)\n";
  EXPECT_LT(last, 0.6 * first);
}

}  // namespace
