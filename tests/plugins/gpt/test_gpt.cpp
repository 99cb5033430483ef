// The gpt model plugin on its own: the spec's size, context windows 41..1024, causality.
// (Parity with PyTorch is in test_gpt_parity.cpp.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "support/model_plugins.h"

namespace {

using nlohmann::json;

const json kTiny = {
    {"vocab_size", 40}, {"d_model", 8}, {"n_layer", 1}, {"n_head", 2}, {"d_ff", 16}};

hlm::test::ModelPlugins& plugins() {
  static hlm::test::ModelPlugins instance;
  return instance;
}

TEST(Gpt, HasTheSpecsParameterCountWithItsDefaults) {
  auto model = plugins().make("gpt");
  EXPECT_EQ(hlm::test::parameter_count(*model), 3323392);
  EXPECT_EQ(model->objective(), hlm::Objective::kCausal);
  EXPECT_EQ(model->context(), 128);
}

TEST(Gpt, RunsEveryContextFrom41To1024AndRefusesLongerInput) {
  for (int64_t context : {41, 1024}) {
    json params = kTiny;
    params["context"] = context;
    auto model = plugins().make("gpt", params);
    torch::NoGradGuard no_grad;
    const auto tokens = torch::randint(0, 40, {2, context}, torch::kLong);
    const auto logits = model->logits(model->hidden(tokens));
    EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, context, 40})) << "context " << context;
    EXPECT_TRUE(logits.isfinite().all().item<bool>()) << "context " << context;
    EXPECT_THROW(model->hidden(torch::zeros({1, context + 1}, torch::kLong)), c10::Error);
  }
}

TEST(Gpt, LetsNoPositionSeeALaterToken) {
  auto model = plugins().make("gpt", kTiny);
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randint(4, 40, {1, 50}, torch::kLong);
  auto changed = tokens.clone();
  changed[0][30] = (tokens[0][30].item<int64_t>() + 1 - 4) % 36 + 4;
  const auto a = model->hidden(tokens), b = model->hidden(changed);
  EXPECT_LT((a.slice(1, 0, 30) - b.slice(1, 0, 30)).abs().max().item<double>(), 1e-6);
  EXPECT_FALSE(torch::allclose(a.slice(1, 30), b.slice(1, 30)));
}

}  // namespace
