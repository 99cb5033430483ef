// hlm::linear inside bfloat16 autocast regions: one oneDNN matmul primitive computes
// x W^T + b with the float32 bias added to the float accumulator before rounding, where
// LibTorch's autocast addmm first copies a bfloat16 bias into the output and runs the GEMM
// with beta = 1 (an extra pass over the output, and the bias rounded to bfloat16 first).
// Backward is LibTorch's bfloat16 mm and column sum, as under autocast.
#pragma once
#include <torch/torch.h>

namespace hlm {

// False when HLM_GEMM=aten: every product then goes to LibTorch's operators (to compare, or
// to rule oneDNN out). Read once.
bool onednn_products_enabled();

// True when x (2-D) @ weight^T + bias can take this path: bfloat16 autocast on the CPU,
// float32 or bfloat16 CPU tensors, oneDNN built in, and a oneDNN kernel for bfloat16 on this
// machine (not its slow reference implementation).
bool bf16_linear_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// x [M, K] @ weight[N, K]^T + bias[N] (bias may be undefined), as bfloat16 [M, N].
at::Tensor bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace hlm
