// Thread count and GEMM peak (see compute.h).
#include "ops/compute.h"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>

#include "hlm/gemm.h"
#include "hlm/util.h"

namespace hlm {

void set_compute_threads(int threads) {
  at::set_num_threads(std::max(1, threads));
  using SetThreads = void (*)(int);
  if (auto fn = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    fn(std::max(1, threads));
}

double measure_peak_flops(bool bf16) {
  torch::NoGradGuard no_grad;
  const int64_t n = 1024;
  auto dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
  // Its own generator: drawing from the default one would move the training stream (dropout)
  // away from where a resumed run restored it.
  at::Generator generator = at::detail::createCPUGenerator(/*seed_val=*/0);
  auto a = torch::randn({n, n}, generator).to(dtype), b = torch::randn({n, n}, generator).to(dtype);
  gemm(a, b, false, false);  // warm-up; the same GEMM the models call (hlm/gemm.h)
  // The fastest of a few tenths of a second of GEMMs: freshly started ranks can share a core
  // until the scheduler spreads them, and the best of only 3 GEMMs then measured half the
  // one-core peak.
  double best = 1e30;
  const double start = now_seconds();
  for (int i = 0; i < 3 || now_seconds() - start < 0.3; ++i) {
    const double t0 = now_seconds();
    gemm(a, b, false, false);
    best = std::min(best, now_seconds() - t0);
  }
  return 2.0 * n * n * n / best;
}

}  // namespace hlm
