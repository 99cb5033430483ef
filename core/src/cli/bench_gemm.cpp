// `hlm bench gemm` (see bench_gemm.h).
#include "cli/bench_gemm.h"

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "hlm/gemm.h"
#include "hlm/util.h"
#include "ops/compute.h"

namespace hlm {
namespace {

constexpr int64_t kN = 1024;

// Best GFLOP/s of `product` (one n^3 multiply-add each call) over about 0.3 s.
double best_gflops(const std::function<void()>& product) {
  product();  // warm-up: allocations, kernel selection
  double best = 1e30;
  const double start = now_seconds();
  for (int i = 0; i < 3 || now_seconds() - start < 0.3; ++i) {
    const double t0 = now_seconds();
    product();
    best = std::min(best, now_seconds() - t0);
  }
  return 2.0 * double(kN) * double(kN) * double(kN) / best / 1e9;
}

}  // namespace

int bench_gemm_command() {
  set_compute_threads(1);
  torch::NoGradGuard no_grad;
  at::Generator generator = at::detail::createCPUGenerator(0);
  const at::Tensor a = torch::randn({kN, kN}, generator), b = torch::randn({kN, kN}, generator);
  const at::Tensor a16 = a.to(torch::kBFloat16), b16 = b.to(torch::kBFloat16);
  const nlohmann::json out = {{"threads", 1},
                              {"n", kN},
                              {"fp32_gflops", best_gflops([&] { gemm(a, b, false, false); })},
                              {"bf16_gflops", best_gflops([&] { gemm(a16, b16, false, false); })}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace hlm
