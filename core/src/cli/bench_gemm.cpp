// `hlm bench gemm` (see bench_gemm.h).
#include "cli/bench_gemm.h"

#include <dlfcn.h>

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
  product();  // warm-up: allocations, oneDNN primitive creation
  double best = 1e30;
  const double start = now_seconds();
  for (int i = 0; i < 3 || now_seconds() - start < 0.3; ++i) {
    const double t0 = now_seconds();
    product();
    best = std::min(best, now_seconds() - t0);
  }
  return 2.0 * double(kN) * double(kN) * double(kN) / best / 1e9;
}

// OpenBLAS's bfloat16 GEMM, when the loaded OpenBLAS was built with it.
using Sbgemm = void (*)(int, int, int, int, int, int, float, const uint16_t*, int, const uint16_t*,
                        int, float, float*, int);

nlohmann::json openblas_bf16() {
  const auto sbgemm = reinterpret_cast<Sbgemm>(dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
  if (!sbgemm) return nullptr;
  std::vector<uint16_t> a(kN * kN, 0x3f80), b(kN * kN, 0x3f80);  // 1.0 in bfloat16
  std::vector<float> c(kN * kN);
  const int n = int(kN);
  return best_gflops([&] {
    sbgemm(101 /*row major*/, 111, 111 /*no transpose*/, n, n, n, 1.0f, a.data(), n, b.data(), n,
           0.0f, c.data(), n);
  });
}

}  // namespace

int bench_gemm_command() {
  set_compute_threads(1);
  torch::NoGradGuard no_grad;
  at::Generator generator = at::detail::createCPUGenerator(0);
  const at::Tensor a = torch::randn({kN, kN}, generator), b = torch::randn({kN, kN}, generator);
  const at::Tensor a16 = a.to(torch::kBFloat16), b16 = b.to(torch::kBFloat16);
  const nlohmann::json out = {
      {"threads", 1},
      {"n", kN},
      {"onednn_fp32_gflops", best_gflops([&] { gemm(a, b, false, false); })},
      {"openblas_fp32_gflops", best_gflops([&] { at::mm(a, b); })},
      {"onednn_bf16_gflops", best_gflops([&] { at::mm(a16, b16); })},
      {"openblas_bf16_gflops", openblas_bf16()}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace hlm
