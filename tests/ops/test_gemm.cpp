// hlm::gemm and hlm::linear against LibTorch's operators: values and every gradient, for each
// transpose combination, batched and not, with and without the broadcast addend.
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "hlm/gemm.h"

namespace {

struct Case {
  bool batched, ta, tb, with_c;
};

// The reference: the same product written with LibTorch's autograd operators.
at::Tensor reference(const at::Tensor& a, const at::Tensor& b, bool ta, bool tb, double alpha,
                     const at::Tensor& c) {
  at::Tensor x = ta ? a.transpose(-2, -1) : a, y = tb ? b.transpose(-2, -1) : b;
  at::Tensor r = at::matmul(x, y) * alpha;
  return c.defined() ? r + c : r;
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const char* what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << what;
}

TEST(Gemm, ValuesAndGradientsMatchLibTorch) {
  torch::manual_seed(0);
  const int64_t m = 7, k = 5, n = 6, batch = 3;
  for (const Case cs : {Case{false, false, false, false}, Case{false, false, true, true},
                        Case{false, true, false, true}, Case{false, true, true, false},
                        Case{true, false, false, true}, Case{true, false, true, true},
                        Case{true, true, false, false}, Case{true, true, true, true}}) {
    SCOPED_TRACE(testing::Message() << "batched=" << cs.batched << " ta=" << cs.ta
                                    << " tb=" << cs.tb << " c=" << cs.with_c);
    std::vector<int64_t> a_shape = cs.ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
    std::vector<int64_t> b_shape = cs.tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
    if (cs.batched) a_shape.insert(a_shape.begin(), batch), b_shape.insert(b_shape.begin(), batch);
    const at::Tensor a0 = torch::randn(a_shape), b0 = torch::randn(b_shape);
    const at::Tensor c0 = cs.with_c ? torch::randn({n}) : at::Tensor();
    const double alpha = 0.5;

    auto leaf = [](const at::Tensor& t) { return t.defined() ? t.clone().requires_grad_() : t; };
    at::Tensor a1 = leaf(a0), b1 = leaf(b0), c1 = leaf(c0);
    at::Tensor a2 = leaf(a0), b2 = leaf(b0), c2 = leaf(c0);
    const at::Tensor got = hlm::gemm(a1, b1, cs.ta, cs.tb, alpha, c1);
    const at::Tensor want = reference(a2, b2, cs.ta, cs.tb, alpha, c2);
    expect_close(got, want, "product");
    const at::Tensor weights = torch::randn(want.sizes());
    (got * weights).sum().backward();
    (want * weights).sum().backward();
    expect_close(a1.grad(), a2.grad(), "grad a");
    expect_close(b1.grad(), b2.grad(), "grad b");
    if (cs.with_c) expect_close(c1.grad(), c2.grad(), "grad c");
  }
}

TEST(Gemm, LinearMatchesTorchLinearOnThreeDimensionalInput) {
  torch::manual_seed(1);
  torch::nn::Linear ref(8, 12);
  const at::Tensor x0 = torch::randn({2, 5, 8});
  at::Tensor x1 = x0.clone().requires_grad_(), x2 = x0.clone().requires_grad_();
  const at::Tensor got = hlm::linear(x1, ref->weight, ref->bias);
  const at::Tensor want = ref(x2);
  expect_close(got, want, "linear");
  got.sum().backward();
  const at::Tensor w_grad = ref->weight.grad().clone(), b_grad = ref->bias.grad().clone();
  ref->zero_grad();
  want.sum().backward();
  expect_close(x1.grad(), x2.grad(), "grad x");
  expect_close(w_grad, ref->weight.grad(), "grad weight");
  expect_close(b_grad, ref->bias.grad(), "grad bias");
}

// Inside autocast the product goes to LibTorch's operators, which autocast turns to bf16.
TEST(Gemm, AutocastRegionsUseLibTorchsBf16Path) {
  const at::Tensor a = torch::randn({4, 8}), b = torch::randn({8, 3});
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const at::Tensor r = hlm::gemm(a, b, false, false);
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  EXPECT_EQ(r.scalar_type(), at::kBFloat16);
  EXPECT_EQ(hlm::gemm(a, b, false, false).scalar_type(), at::kFloat);
}

// Inside bf16 autocast, hlm::linear gives what autocast's torch::linear gives, to bf16
// precision, with gradients of the inputs' own dtypes.
TEST(Gemm, Bf16LinearMatchesAutocastLinear) {
  torch::manual_seed(2);
  torch::nn::Linear ref(64, 48);
  const at::Tensor x0 = torch::randn({3, 40, 64});
  at::Tensor x1 = x0.clone().requires_grad_(), x2 = x0.clone().requires_grad_();
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const at::Tensor got = hlm::linear(x1, ref->weight, ref->bias);
  const at::Tensor want = ref(x2);
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  ASSERT_EQ(got.scalar_type(), at::kBFloat16);
  ASSERT_EQ(got.sizes(), want.sizes());
  auto close = [](const at::Tensor& a, const at::Tensor& b, const char* what) {
    // A few bf16 roundings (2^-8 relative each) of values of order one.
    const double scale = b.abs().max().item<double>();
    EXPECT_LT((a.to(at::kFloat) - b.to(at::kFloat)).abs().max().item<double>(), 0.02 * scale)
        << what;
  };
  close(got, want, "linear");
  const at::Tensor weights = torch::randn(want.sizes());
  (got.to(at::kFloat) * weights).sum().backward();
  const at::Tensor w_grad = ref->weight.grad().clone(), b_grad = ref->bias.grad().clone();
  ref->zero_grad();
  (want.to(at::kFloat) * weights).sum().backward();
  EXPECT_EQ(x1.grad().scalar_type(), at::kFloat);
  EXPECT_EQ(w_grad.scalar_type(), at::kFloat);
  close(x1.grad(), x2.grad(), "grad x");
  close(w_grad, ref->weight.grad(), "grad weight");
  close(b_grad, ref->bias.grad(), "grad bias");
}

}  // namespace
