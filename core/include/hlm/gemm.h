// Matrix products for model plugins, with autograd. In float32 on the CPU they run on
// oneDNN's GEMM, which on AVX-512 machines does several times the work per second of the
// OpenBLAS sgemm behind LibTorch's own matmul (one core, `hlm bench gemm`: ~200 against ~100
// GFLOP/s on one machine, 130-155 against 28-32 on another; docs/benchmarks.md). Inside bfloat16
// autocast regions, linear runs one oneDNN matmul primitive with the float32 bias in its
// accumulator (an extra pass fewer than autocast's addmm) and gemm uses LibTorch's autocast
// operators. Other dtypes, other devices and builds without oneDNN use LibTorch's operators, so
// results only ever differ by summation order (and, in bfloat16, by where the bias is rounded).
#pragma once
#include <torch/torch.h>

namespace hlm {

// alpha * op(a) @ op(b) + c, where op transposes the last two dimensions when asked.
// a and b are 2-D, or 3-D with the same leading (batch) size; c (optional) broadcasts to the
// result, like baddbmm's input, and gets a gradient when it requires one.
at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, bool transpose_a, bool transpose_b,
                double alpha = 1.0, const at::Tensor& c = {});

// x @ weight^T + bias over the last dimension of x: torch::nn::Linear's forward.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

}  // namespace hlm
