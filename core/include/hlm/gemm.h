// Matrix products for model plugins, with autograd, on LibTorch's operators (autocast-aware:
// inside bfloat16 autocast regions they run in bfloat16). PyTorch's wheel computes float32
// products with the MKL it carries and bfloat16 ones with its own oneDNN. (Against Debian's
// LibTorch 1.13, whose matmul is OpenBLAS's, these called Debian's oneDNN directly; that
// library cannot share a process with the wheel, whose oneDNN exports symbols of the same names.)
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
