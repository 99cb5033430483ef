// AdamW in one pass over each parameter's memory. torch::optim::AdamW makes about eight
// passes per parameter (mul_, add_, mul_, addcmul_, sqrt, div, add_, addcdiv_) with
// temporaries, memory-bound: a visible share of a small model's step on one thread
// (docs/benchmarks.md).
// The update keeps LibTorch's state (exp_avg, exp_avg_sq, step, under LibTorch's keys), so
// checkpoints written through torch::optim::AdamW's serialisation load either way.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace hlm {

// L2 norm over every defined gradient, one pass, accumulated in double.
double gradient_norm(const std::vector<at::Tensor>& params);

// One AdamW step (LibTorch's arithmetic: decoupled weight decay, bias-corrected moments)
// of every parameter with a gradient; each gradient is multiplied by grad_scale first
// (gradient clipping). On the CPU, hlm's kernel for contiguous float32 tensors; on a GPU,
// aten_fused_adamw_step; otherwise (amsgrad, other CPU tensors) optimizer.step().
void adamw_step(torch::optim::AdamW& optimizer, double grad_scale = 1.0);

// The same step through ATen's fused multi-tensor kernel (what PyTorch's AdamW(fused=True)
// calls): one launch per parameter group on a GPU. Any device; no amsgrad.
void aten_fused_adamw_step(torch::optim::AdamW& optimizer, double grad_scale = 1.0);

// Clips the gradients of params to a global L2 norm of at most max_norm (0 = no clipping,
// torch::nn::utils::clip_grad_norm_'s factor max_norm / (norm + 1e-6)) inside the update,
// then takes adamw_step, unless `admit` (given the norm) says no. Returns the norm before
// clipping.
double clipped_adamw_step(torch::optim::AdamW& optimizer, const std::vector<at::Tensor>& params,
                          double max_norm, const std::function<bool(double norm)>& admit = {});

// Drops every gradient (PyTorch's zero_grad(set_to_none=True)): the next backward stores
// its gradient instead of adding it to a zero-filled one, two passes fewer per parameter.
void drop_gradients(torch::optim::Optimizer& optimizer);

}  // namespace hlm
