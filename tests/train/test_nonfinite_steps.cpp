// NaN and infinite steps in the real trainer with a real GPT: a step whose loss or gradient is
// not finite is never applied; by default the run stops there, naming the step and keeping the
// last good checkpoint as it was; with max_skipped_steps it skips that many and goes on.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>
#include <string>

#include "hlm/token_store.h"
#include "metrics/heartbeat.h"
#include "support/hlm_cli.h"
#include "support/model_plugins.h"
#include "train/checkpoint.h"
#include "train/nonfinite_steps.h"
#include "train/trainer.h"

using hlm::test::ScratchDir;

namespace {

constexpr uint32_t kVocab = 20;

// One record of pseudo-random tokens: enough windows for a few steps of a tiny model.
std::string write_store(const std::filesystem::path& dir) {
  const std::string path = (dir / "tokens.hlmtok").string();
  hlm::Beats beats;
  beats.record = "r0";
  beats.sampling_hz = 250;
  for (uint32_t i = 0; i < 3000; ++i) {
    beats.positions.push_back(int64_t(100 + 200 * i));
    beats.rr_seconds.push_back(0.8f);
    beats.labels.push_back(0);
    beats.tokens.push_back((i * 7919u + (i / 7) * 104729u) % kVocab);
  }
  hlm::TokenStoreWriter writer(path, kVocab, "test-tokens");
  writer.append(beats);
  writer.finish();
  return path;
}

struct SmallRun {
  ScratchDir dir;
  hlm::test::ModelPlugins plugins;
  std::shared_ptr<hlm::Model> model = plugins.make("gpt", {{"vocab_size", kVocab},
                                                           {"context", 16},
                                                           {"d_model", 16},
                                                           {"n_layer", 1},
                                                           {"n_head", 2},
                                                           {"d_ff", 32}});
  hlm::TokenStore store = hlm::TokenStore::open(write_store(dir.path));

  hlm::TrainJob job;

  explicit SmallRun(const std::string& name) : dir("hlm_nonfinite_" + name) {
    job.options.steps = 10;
    job.options.batch = 4;
    job.options.warmup_steps = 0;
    job.options.checkpoint_every = 2;
    job.options.keep_checkpoints = 0;
    job.options.eval_batches = 0;
    job.options.save_weights = false;
    job.out_dir = (dir.path / "pretrain").string();
  }
  std::string checkpoints() const { return job.out_dir + "/checkpoints"; }

  // Diverged's message, or "" when training finished.
  std::string train_until_diverged(hlm::TrainResult* result = nullptr) {
    try {
      const hlm::TrainResult r = hlm::train_language_model(*model, store, job);
      if (result) *result = r;
    } catch (const hlm::Diverged& e) {
      return e.what();
    }
    return "";
  }

  // Sets the gradient of the first parameter to +inf on the given (1-based) steps, after the
  // backward and before the optimizer: what an overflowing gradient looks like to the step.
  void poison_gradients_on(std::set<int64_t> steps) {
    job.on_activity = [this, steps, step = int64_t(0)](hlm::RankActivity activity) mutable {
      if (activity != hlm::RankActivity::kOptimizer) return;
      if (steps.count(++step)) model->module().parameters()[0].mutable_grad().fill_(INFINITY);
    };
  }
};

bool all_finite(torch::nn::Module& module) {
  for (const auto& p : module.parameters())
    if (!torch::isfinite(p).all().item<bool>()) return false;
  return true;
}

TEST(NonFiniteSteps, ANonFiniteLossStopsTheRunNamingTheStepAndKeepsTheLastGoodCheckpoint) {
  SmallRun run("loss");
  // After step 5 a weight turns NaN, as a diverging run's would: step 6's loss is NaN.
  run.job.on_step = [&](const hlm::TrainStep& s) {
    if (s.step != 5) return;
    torch::NoGradGuard no_grad;
    run.model->module().parameters()[0].fill_(NAN);
  };
  const std::string what = run.train_until_diverged();
  ASSERT_FALSE(what.empty()) << "a NaN loss did not stop the run";
  EXPECT_NE(what.find("step 6: the loss is not finite"), std::string::npos) << what;
  const std::string last_good = run.checkpoints() + "/step_4";
  EXPECT_NE(what.find(last_good), std::string::npos) << what;
  EXPECT_EQ(hlm::latest_checkpoint(run.checkpoints()), last_good);

  // The kept checkpoint loads (checksums hold) and holds finite weights from before the NaN.
  SmallRun fresh("fresh");
  torch::optim::AdamW optimizer(fresh.model->module().parameters(),
                                torch::optim::AdamWOptions(1e-3));
  const hlm::CheckpointState state =
      hlm::load_checkpoint(last_good, fresh.model->module(), optimizer, 0, 1);
  EXPECT_EQ(state.step, 4);
  EXPECT_EQ(state.losses.size(), 4u);
  EXPECT_TRUE(all_finite(fresh.model->module()));
}

TEST(NonFiniteSteps, AnInfiniteGradientIsSkippedUpToMaxSkippedStepsAndTheRunGoesOn) {
  SmallRun run("skips");
  run.job.options.max_skipped_steps = 2;
  run.poison_gradients_on({3, 7});
  // The weights after step 3 (skipped) are the weights after step 2.
  std::vector<at::Tensor> after_step2, after_step3;
  const auto poison = run.job.on_activity;
  run.job.on_activity = [&, step = int64_t(0)](hlm::RankActivity activity) mutable {
    if (activity == hlm::RankActivity::kData && (step == 2 || step == 3)) {
      auto& into = step == 2 ? after_step2 : after_step3;
      if (into.empty())
        for (const auto& p : run.model->module().parameters()) into.push_back(p.detach().clone());
    }
    if (activity == hlm::RankActivity::kOptimizer) ++step;
    poison(activity);
  };
  hlm::TrainResult result;
  const std::string what = run.train_until_diverged(&result);
  ASSERT_TRUE(what.empty()) << "two skips under max_skipped_steps=2 stopped the run: " << what;
  EXPECT_EQ(result.skipped_steps, 2);
  EXPECT_EQ(result.losses.size(), 8u) << "a skipped step left a loss";
  EXPECT_TRUE(all_finite(run.model->module()));
  ASSERT_EQ(after_step2.size(), after_step3.size());
  for (size_t k = 0; k < after_step2.size(); ++k)
    EXPECT_TRUE(torch::equal(after_step2[k], after_step3[k])) << "parameter " << k;
  // The count travels in the checkpoint, so a resume does not grant fresh skips.
  SmallRun fresh("fresh");
  torch::optim::AdamW optimizer(fresh.model->module().parameters(),
                                torch::optim::AdamWOptions(1e-3));
  EXPECT_EQ(
      hlm::load_checkpoint(run.checkpoints() + "/step_10", fresh.model->module(), optimizer, 0, 1)
          .skipped_steps,
      2);
}

TEST(NonFiniteSteps, OneSkipMoreThanAllowedStopsTheRunNamingTheCount) {
  SmallRun run("over");
  run.job.options.max_skipped_steps = 1;
  run.poison_gradients_on({3, 5});
  const std::string what = run.train_until_diverged();
  ASSERT_FALSE(what.empty()) << "a second bad step under max_skipped_steps=1 did not stop the run";
  EXPECT_NE(what.find("step 5: the gradient norm is inf"), std::string::npos) << what;
  EXPECT_NE(what.find("1 of at most 1"), std::string::npos) << what;
  EXPECT_EQ(hlm::latest_checkpoint(run.checkpoints()), run.checkpoints() + "/step_4");
}

}  // namespace
