// The gpt plugin against PyTorch in Python: with the same weights, the peer's HeartGPT
// (../shared/peers/torch_pretrain.py) gives the same logits, loss, gradients and 10 AdamW steps.
// Skips when HLM_PYTHON (the .venv) has no torch or the peer file is absent.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <iostream>

#include "support/hlm_cli.h"
#include "support/model_plugins.h"
#include "support/python_torch.h"
#include "train/export.h"

namespace fs = std::filesystem;

namespace {

// The spec's model (hlm-gpt-small.yaml): the defaults of the plugin.
constexpr int64_t kVocab = 512, kContext = 128, kDModel = 256, kLayers = 4, kHeads = 4, kFf = 1024;
constexpr int64_t kBatch = 4, kSteps = 10;
constexpr double kLr = 3e-4, kWeightDecay = 0.1, kTolerance = 1e-4;

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

class GptParity : public ::testing::Test {
 protected:
  // One Python run serves every test: weights, batches and the reference outputs.
  static void SetUpTestSuite() {
    // The peers sit beside the shared data folder (../shared/{data,peers}).
    const fs::path peer = fs::path(HLM_TEST_DATA_DIR) / ".." / "peers" / "torch_pretrain.py";
    skip_reason_ = hlm::test::python_torch_missing();
    if (skip_reason_.empty() && !fs::exists(peer)) skip_reason_ = peer.string() + " not found";
    if (!skip_reason_.empty()) return;
    dir_ = new hlm::test::ScratchDir("hlm_gpt_parity");
    torch::manual_seed(0);
    auto model = plugins().make("gpt");
    hlm::export_state_dict(model->module(), weights_path());
    batches_ = torch::randint(0, kVocab, {kSteps, kBatch, kContext + 1}, torch::kLong);
    hlm::save_tensor_dict({{"tokens", batches_}}, (dir_->path / "batches.pt").string());
    const fs::path out = dir_->path / "reference.pt";
    const std::string args =
        "'" HLM_SOURCE_DIR "/tests/plugins/gpt/gpt_reference.py' --peer '" + peer.string() +
        "' --weights '" + weights_path() + "' --batches '" + (dir_->path / "batches.pt").string() +
        "' --out '" + out.string() + "' --vocab " + std::to_string(kVocab) + " --context " +
        std::to_string(kContext) + " --d-model " + std::to_string(kDModel) + " --layers " +
        std::to_string(kLayers) + " --heads " + std::to_string(kHeads) + " --ff " +
        std::to_string(kFf) + " --steps " + std::to_string(kSteps);
    const auto result = hlm::test::run_python(args, dir_->path / "python.log");
    if (result.exit_code != 0) {
      python_error_ = "gpt_reference.py failed (exit " + std::to_string(result.exit_code) + "):\n" +
                      result.output;
      return;
    }
    reference_ = new std::map<std::string, at::Tensor>(hlm::import_state_dict(out.string()));
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete dir_;
    reference_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(python_error_.empty()) << python_error_;
  }

  static hlm::test::ModelPlugins& plugins() {
    static hlm::test::ModelPlugins instance;
    return instance;
  }
  static std::string weights_path() { return (dir_->path / "weights.pt").string(); }
  // A fresh gpt holding the exported weights, read back through import_state_dict.
  static std::shared_ptr<hlm::Model> model_with_the_weights() {
    auto model = plugins().make("gpt");
    hlm::load_state_dict(model->module(), hlm::import_state_dict(weights_path()), weights_path());
    return model;
  }
  static at::Tensor loss_on(hlm::Model& model, const at::Tensor& batch,
                            at::Tensor* logits_out = nullptr) {
    const auto inputs = batch.slice(1, 0, kContext), targets = batch.slice(1, 1, kContext + 1);
    auto logits = model.logits(model.hidden(inputs));
    if (logits_out) *logits_out = logits.detach();
    return torch::nn::functional::cross_entropy(logits.to(torch::kFloat).view({-1, kVocab}),
                                                targets.reshape({-1}));
  }
  static const at::Tensor& reference(const std::string& name) { return reference_->at(name); }

  static inline std::string skip_reason_, python_error_;
  static inline hlm::test::ScratchDir* dir_ = nullptr;
  static inline std::map<std::string, at::Tensor>* reference_ = nullptr;
  static inline at::Tensor batches_;
};

TEST_F(GptParity, CountsTheSameParametersAsThePeer) {
  auto model = plugins().make("gpt");
  EXPECT_EQ(reference("params").item<int64_t>(), hlm::test::parameter_count(*model));
}

TEST_F(GptParity, GivesThePeersLogitsLossAndGradientsForTheSameWeights) {
  auto model = model_with_the_weights();
  at::Tensor logits;
  auto loss = loss_on(*model, batches_[0], &logits);
  loss.backward();
  const double logits_diff = max_abs_diff(logits, reference("logits"));
  const double loss_diff = std::abs(loss.item<double>() - reference("loss").item<double>());
  double grad_diff = 0;
  for (const auto& p : model->module().named_parameters()) {
    const double d = max_abs_diff(p.value().grad(), reference("grad." + p.key()));
    EXPECT_LT(d, kTolerance) << "gradient of " << p.key();
    grad_diff = std::max(grad_diff, d);
  }
  std::cout << "[ parity ] max |logits diff| " << logits_diff << ", |loss diff| " << loss_diff
            << " (loss " << loss.item<double>() << "), max |grad diff| " << grad_diff << "\n";
  EXPECT_LT(logits_diff, kTolerance);
  EXPECT_LT(loss_diff, kTolerance);
}

TEST_F(GptParity, TrainsTenAdamWStepsWithThePeersLosses) {
  auto model = model_with_the_weights();
  torch::optim::AdamW optimizer(
      model->module().parameters(),
      torch::optim::AdamWOptions(kLr).betas({0.9, 0.999}).eps(1e-8).weight_decay(kWeightDecay));
  const auto expected = reference("losses");
  double worst = 0;
  for (int64_t step = 0; step < kSteps; ++step) {
    auto loss = loss_on(*model, batches_[step]);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    const double diff = std::abs(loss.item<double>() - expected[step].item<double>());
    EXPECT_LT(diff, kTolerance) << "step " << step << ": hlm " << loss.item<double>() << ", peer "
                                << expected[step].item<double>();
    worst = std::max(worst, diff);
  }
  std::cout << "[ parity ] " << kSteps << " AdamW steps: losses " << expected[0].item<double>()
            << " -> " << expected[kSteps - 1].item<double>() << ", max |loss diff| " << worst
            << "\n";
}

}  // namespace
