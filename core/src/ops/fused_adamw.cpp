// One-pass AdamW (see fused_adamw.h).
#include "ops/fused_adamw.h"

#include <cmath>

#include "ops/adamw_kernel.h"

namespace hlm {
namespace {

bool fusable(const at::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
}

}  // namespace

double gradient_norm(const std::vector<at::Tensor>& params) {
  double squares = 0;
  for (const auto& p : params) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (fusable(g))
      squares += sum_of_squares(g.data_ptr<float>(), g.numel());
    else
      squares += g.to(at::kDouble).pow(2).sum().item<double>();
  }
  return std::sqrt(squares);
}

void adamw_step(torch::optim::AdamW& optimizer, double grad_scale) {
  RECORD_FUNCTION("hlm::adamw_step", std::vector<c10::IValue>());  // named in profiles
  torch::NoGradGuard no_grad;
  bool all_fusable = true;
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    all_fusable = all_fusable && !o.amsgrad();
    for (const auto& p : group.params())
      if (p.grad().defined()) all_fusable = all_fusable && fusable(p) && fusable(p.grad());
  }
  if (!all_fusable) {
    if (grad_scale != 1.0)
      for (auto& group : optimizer.param_groups())
        for (auto& p : group.params())
          if (p.grad().defined()) p.mutable_grad().mul_(grad_scale);
    optimizer.step();
    return;
  }
  auto& states = optimizer.state();
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      // LibTorch's key for a parameter's state (torch/csrc/api/src/optim/adamw.cpp).
      void* const key = p.unsafeGetTensorImpl();
      auto found = states.find(key);
      if (found == states.end()) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        found = states.emplace(key, std::move(fresh)).first;
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*found->second);
      state.step(state.step() + 1);
      const double bias_correction1 = 1 - std::pow(beta1, double(state.step()));
      const double bias_correction2 = 1 - std::pow(beta2, double(state.step()));
      const AdamWScalars s{float(grad_scale),
                           float(1 - o.lr() * o.weight_decay()),
                           float(beta1),
                           float(1 - beta1),
                           float(beta2),
                           float(1 - beta2),
                           float(std::sqrt(bias_correction2)),
                           float(o.eps()),
                           float(o.lr() / bias_correction1)};
      at::Tensor data = p.detach();
      adamw_update(data.data_ptr<float>(), p.grad().data_ptr<float>(),
                   state.exp_avg().data_ptr<float>(), state.exp_avg_sq().data_ptr<float>(),
                   data.numel(), s);
    }
  }
}

double clipped_adamw_step(torch::optim::AdamW& optimizer, const std::vector<at::Tensor>& params,
                          double max_norm, const std::function<bool(double norm)>& admit) {
  const double norm = gradient_norm(params);
  if (admit && !admit(norm)) return norm;
  adamw_step(optimizer, max_norm > 0 && norm > max_norm ? max_norm / (norm + 1e-6) : 1.0);
  return norm;
}

void drop_gradients(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) p.mutable_grad() = at::Tensor();
}

}  // namespace hlm
