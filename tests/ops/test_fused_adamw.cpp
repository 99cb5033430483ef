// hlm::adamw_step and aten_fused_adamw_step (the GPU's path, whose ATen kernel runs on the CPU
// too) against torch::optim::AdamW: same parameters after several steps, the same optimizer
// state under the same keys (LibTorch's step continues where it left off), clipping by
// grad_scale, and the gradient norm of fusable and other gradients.
#include <gtest/gtest.h>

#include "ops/fused_adamw.h"

namespace {

std::vector<at::Tensor> make_params() {
  torch::manual_seed(3);
  // Sizes around the vector width and the norm's 4096 block, plus a matrix.
  return {torch::randn({1}), torch::randn({17}), torch::randn({4097}), torch::randn({33, 65})};
}

std::vector<at::Tensor> clones(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone().requires_grad_(true));
  return out;
}

torch::optim::AdamWOptions options() {
  return torch::optim::AdamWOptions(3e-2).betas({0.9, 0.99}).eps(1e-8).weight_decay(0.1);
}

// Gives every parameter a gradient that depends on the step and on the parameter itself.
void set_gradients(const std::vector<at::Tensor>& params, int step) {
  torch::NoGradGuard no_grad;
  for (const auto& p : params)
    p.mutable_grad() = torch::sin(p.detach() * double(step + 1)) + 0.01 * double(step);
}

void expect_close(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_LT((a[i] - b[i]).abs().max().item<double>(), tol) << "parameter " << i;
}

TEST(FusedAdamW, MatchesLibTorchAdamWOverSteps) {
  const auto base = make_params();
  auto fused = clones(base), reference = clones(base);
  torch::optim::AdamW fused_opt(fused, options()), reference_opt(reference, options());
  for (int step = 0; step < 6; ++step) {
    set_gradients(fused, step);
    set_gradients(reference, step);
    hlm::adamw_step(fused_opt);
    reference_opt.step();
  }
  expect_close(fused, reference, 1e-6);
  // The parameters moved: the comparison is not between two untouched copies.
  EXPECT_GT((fused[3] - base[3]).abs().max().item<double>(), 0.1);
}

TEST(FusedAdamW, KeepsLibTorchsStateSoItsStepContinues) {
  const auto base = make_params();
  auto mixed = clones(base), reference = clones(base);
  torch::optim::AdamW mixed_opt(mixed, options()), reference_opt(reference, options());
  for (int step = 0; step < 5; ++step) {
    set_gradients(mixed, step);
    set_gradients(reference, step);
    // Three fused steps, then LibTorch's own: it must find step counts and moments.
    if (step < 3)
      hlm::adamw_step(mixed_opt);
    else
      mixed_opt.step();
    reference_opt.step();
  }
  expect_close(mixed, reference, 1e-6);
}

TEST(FusedAdamW, GradScaleActsAsClippedGradients) {
  const auto base = make_params();
  auto fused = clones(base), reference = clones(base);
  torch::optim::AdamW fused_opt(fused, options()), reference_opt(reference, options());
  set_gradients(fused, 0);
  set_gradients(reference, 0);
  for (auto& p : reference) p.mutable_grad().mul_(0.25);
  hlm::adamw_step(fused_opt, 0.25);
  reference_opt.step();
  set_gradients(fused, 1);
  set_gradients(reference, 1);
  hlm::adamw_step(fused_opt);
  reference_opt.step();
  expect_close(fused, reference, 1e-6);
}

TEST(FusedAdamW, AtenFusedKernelMatchesLibTorchAdamWWithClippingAndHandsOver) {
  const auto base = make_params();
  auto fused = clones(base), reference = clones(base);
  torch::optim::AdamW fused_opt(fused, options()), reference_opt(reference, options());
  for (int step = 0; step < 6; ++step) {
    set_gradients(fused, step);
    set_gradients(reference, step);
    const double scale = step == 1 ? 0.25 : 1.0;  // one clipped step
    if (scale != 1.0)
      for (auto& p : reference) p.mutable_grad().mul_(scale);
    // Four steps through ATen's kernel, then LibTorch's own finds its step counts and moments.
    if (step < 4)
      hlm::aten_fused_adamw_step(fused_opt, scale);
    else
      fused_opt.step();
    reference_opt.step();
  }
  expect_close(fused, reference, 1e-5);
  EXPECT_GT((fused[3] - base[3]).abs().max().item<double>(), 0.1);
}

TEST(FusedAdamW, GradientNormCountsGradientsHlmsKernelCannotRead) {
  auto params = clones(make_params());
  set_gradients(params, 2);
  const double contiguous = hlm::gradient_norm(params);
  // The same gradients as non-contiguous views: the norm goes through ATen's, all at once.
  for (auto& p : params)
    if (p.dim() == 2) p.mutable_grad() = p.grad().t().contiguous().t();
  ASSERT_FALSE(params[3].grad().is_contiguous());
  EXPECT_NEAR(hlm::gradient_norm(params), contiguous, 1e-5 * contiguous);
}

TEST(FusedAdamW, GradientNormMatchesLibTorch) {
  auto params = clones(make_params());
  set_gradients(params, 2);
  std::vector<at::Tensor> squares;
  for (const auto& p : params) squares.push_back(p.grad().to(torch::kDouble).pow(2).sum());
  const double expected = torch::stack(squares).sum().sqrt().item<double>();
  EXPECT_NEAR(hlm::gradient_norm(params), expected, 1e-6 * expected);
  // A parameter without a gradient does not count; dropping them leaves none.
  params[0].mutable_grad() = at::Tensor();
  EXPECT_LT(hlm::gradient_norm(params), expected);
  torch::optim::AdamW opt(params, options());
  hlm::drop_gradients(opt);
  EXPECT_EQ(hlm::gradient_norm(params), 0.0);
}

}  // namespace
