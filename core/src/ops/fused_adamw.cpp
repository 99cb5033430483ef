// One-pass AdamW (see fused_adamw.h).
#include "ops/fused_adamw.h"

#include <cmath>

#include "ops/adamw_kernel.h"

namespace hlm {
namespace {

bool fusable(const at::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
}

// A parameter's AdamW state under LibTorch's key (torch/csrc/api/src/optim/adamw.cpp), made
// as LibTorch makes it on the parameter's first step.
torch::optim::AdamWParamState& state_of(torch::optim::AdamW& optimizer, const at::Tensor& p) {
  auto& states = optimizer.state();
  void* const key = p.unsafeGetTensorImpl();
  auto found = states.find(key);
  if (found == states.end()) {
    auto fresh = std::make_unique<torch::optim::AdamWParamState>();
    fresh->step(0);
    fresh->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
    fresh->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
    found = states.emplace(key, std::move(fresh)).first;
  }
  return static_cast<torch::optim::AdamWParamState&>(*found->second);
}

// Off the CPU every parameter of a group can go through ATen's fused kernel at once.
bool aten_fusable(const torch::optim::AdamW& optimizer) {
  for (const auto& group : optimizer.param_groups()) {
    if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad()) return false;
    for (const auto& p : group.params())
      if (p.grad().defined() && (p.device().is_cpu() || !at::isFloatingType(p.scalar_type())))
        return false;
  }
  return true;
}

}  // namespace

double gradient_norm(const std::vector<at::Tensor>& params) {
  double squares = 0;
  std::vector<at::Tensor> others;  // on a GPU: one norm kernel per list and one wait, not one each
  for (const auto& p : params) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (fusable(g))
      squares += sum_of_squares(g.data_ptr<float>(), g.numel());
    else
      others.push_back(g);
  }
  if (!others.empty())
    squares += torch::stack(at::_foreach_norm(others)).to(at::kDouble).pow(2).sum().item<double>();
  return std::sqrt(squares);
}

void aten_fused_adamw_step(torch::optim::AdamW& optimizer, double grad_scale) {
  RECORD_FUNCTION("hlm::aten_fused_adamw_step", std::vector<c10::IValue>());
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs;
    std::vector<float> steps;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(optimizer, p);
      state.step(state.step() + 1);  // the kernel takes the step count after this update
      params.push_back(p.detach());
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      steps.push_back(float(state.step()));
    }
    if (params.empty()) continue;
    const auto on_device = torch::TensorOptions().device(params.front().device());
    // One copy of every step count, as views; ATen's kernel divides the gradients by
    // grad_scale (it is the loss scaler's), so clipping passes the inverse of its factor.
    const std::vector<at::Tensor> state_steps =
        torch::tensor(steps).to(on_device.dtype(at::kFloat)).unbind(0);
    std::optional<at::Tensor> divide_by;
    if (grad_scale != 1.0)
      divide_by = torch::full({}, 1.0 / grad_scale, on_device.dtype(at::kFloat));
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, state_steps,
                      o.lr(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.weight_decay(),
                      o.eps(), /*amsgrad=*/false, /*maximize=*/false, divide_by, std::nullopt);
  }
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
  if (!all_fusable && aten_fusable(optimizer)) return aten_fused_adamw_step(optimizer, grad_scale);
  if (!all_fusable) {
    if (grad_scale != 1.0)
      for (auto& group : optimizer.param_groups())
        for (auto& p : group.params())
          if (p.grad().defined()) p.mutable_grad().mul_(grad_scale);
    optimizer.step();
    return;
  }
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& state = state_of(optimizer, p);
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
