// How fast this process computes: its thread count, and the peak of the GEMM the models call
// (the denominator of model FLOPs utilisation).
#pragma once

namespace hlm {

// Sets LibTorch's and OpenBLAS's thread counts (OpenBLAS reads its env only at load time).
void set_compute_threads(int threads);

// Peak FLOP/s of a large GEMM (bfloat16 or float32) with the current thread settings.
double measure_peak_flops(bool bf16);

}  // namespace hlm
