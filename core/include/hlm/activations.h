// Activations for model plugins, with autograd.
#pragma once
#include <torch/torch.h>

namespace hlm {

// Exact GELU, x * Phi(x) (torch::gelu's default). bfloat16 CPU tensors (what autocast
// gives the MLP) go through lookup tables (ops/gelu_table.h): forward values equal
// LibTorch's, gradients are within one bfloat16 rounding of them. Everything else uses
// torch::gelu.
at::Tensor gelu(const at::Tensor& x);

}  // namespace hlm
