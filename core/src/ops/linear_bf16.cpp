// bfloat16 linear layer on a oneDNN matmul primitive (see linear_bf16.h).
#include "ops/linear_bf16.h"

#include <ATen/autocast_mode.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#ifdef HLM_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace hlm {

bool onednn_products_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("HLM_GEMM");
    return !(v && std::string(v) == "aten");
  }();
  return enabled;
}

#ifdef HLM_WITH_ONEDNN
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Primitives {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  // One primitive per shape: creating one costs far more than running a small one.
  std::map<std::tuple<int64_t, int64_t, int64_t, bool>, std::optional<dnnl::matmul>> by_shape;
};

Primitives& primitives() {
  thread_local Primitives p;
  return p;
}

dnnl::memory::desc row_major(int64_t rows, int64_t cols, dnnl::memory::data_type type) {
  return dnnl::memory::desc({rows, cols}, type, dnnl::memory::dims{cols, 1});
}

// bfloat16 weights [K, N] read in place from LibTorch's row-major [N, K].
dnnl::memory::desc transposed_weights(int64_t k, int64_t n) {
  return dnnl::memory::desc({k, n}, dnnl::memory::data_type::bf16, dnnl::memory::dims{1, k});
}

// The primitive for [M, K] x [K, N] (+ [1, N] float bias) -> bfloat16 [M, N], the weights
// read in place from LibTorch's [N, K] layout; empty when oneDNN has only its reference
// implementation for bfloat16 here, or none (a CPU without AVX-512).
const std::optional<dnnl::matmul>& matmul_for(int64_t m, int64_t k, int64_t n, bool with_bias) {
  auto& p = primitives();
  auto [it, fresh] = p.by_shape.try_emplace({m, k, n, with_bias});
  if (!fresh) return it->second;
  using dt = dnnl::memory::data_type;
  const auto src = row_major(m, k, dt::bf16);
  const auto weights = transposed_weights(k, n);
  const auto dst = row_major(m, n, dt::bf16);
  const auto desc = with_bias ? dnnl::matmul::desc(src, weights, row_major(1, n, dt::f32), dst)
                              : dnnl::matmul::desc(src, weights, dst);
  try {
    const dnnl::matmul::primitive_desc pd(desc, p.engine);
    if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) it->second.emplace(pd);
  } catch (const dnnl::error&) {
    // No bfloat16 matmul at all on this CPU (AVX2 without AVX-512): LibTorch's path serves.
  }
  return it->second;
}

at::Tensor run_matmul(const dnnl::matmul& matmul, const at::Tensor& x, const at::Tensor& weight,
                      const at::Tensor& bias) {
  const int64_t m = x.size(0), k = x.size(1), n = weight.size(0);
  at::Tensor y = at::empty({m, n}, x.options().dtype(at::kBFloat16));
  using dt = dnnl::memory::data_type;
  auto& p = primitives();
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, dnnl::memory(row_major(m, k, dt::bf16), p.engine, x.data_ptr())},
      {DNNL_ARG_WEIGHTS, dnnl::memory(transposed_weights(k, n), p.engine, weight.data_ptr())},
      {DNNL_ARG_DST, dnnl::memory(row_major(m, n, dt::bf16), p.engine, y.data_ptr())}};
  if (bias.defined())
    args.emplace(DNNL_ARG_BIAS, dnnl::memory(row_major(1, n, dt::f32), p.engine, bias.data_ptr()));
  matmul.execute(p.stream, args);
  p.stream.wait();
  return y;
}

struct Bf16Linear : torch::autograd::Function<Bf16Linear> {
  // bias is an empty tensor when has_bias is false (autograd functions take no undefined inputs).
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, bool has_bias) {
    const at::Tensor xb = x.to(at::kBFloat16).contiguous();
    const at::Tensor wb = weight.to(at::kBFloat16).contiguous();
    const at::Tensor bf = has_bias ? bias.to(at::kFloat).contiguous() : at::Tensor();
    ctx->save_for_backward({xb, wb});
    ctx->saved_data["x_dtype"] = x.scalar_type();
    ctx->saved_data["w_dtype"] = weight.scalar_type();
    ctx->saved_data["b_dtype"] = has_bias ? bias.scalar_type() : at::kFloat;
    ctx->saved_data["has_bias"] = has_bias;
    return run_matmul(*matmul_for(xb.size(0), xb.size(1), wb.size(0), has_bias), xb, wb, bf);
  }

  // y = x W^T + b: dx = dy W, dW = dy^T x (bfloat16 products, as autocast's addmm backward),
  // db = column sums of dy; each cast back to its input's dtype.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &xb = saved[0], &wb = saved[1];
    const at::Tensor dy = grads[0].to(at::kBFloat16).contiguous();
    at::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) dx = at::mm(dy, wb).to(ctx->saved_data["x_dtype"].toScalarType());
    if (ctx->needs_input_grad(1))
      dw = at::mm(dy.t(), xb).to(ctx->saved_data["w_dtype"].toScalarType());
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2))
      db = dy.sum(0).to(ctx->saved_data["b_dtype"].toScalarType());  // accumulates in float
    return {dx, dw, db, at::Tensor()};
  }
};

bool float_or_bf16_cpu(const at::Tensor& t) {
  return t.device().is_cpu() && t.layout() == at::kStrided &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16);
}

}  // namespace

bool bf16_linear_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!onednn_products_enabled() || !at::autocast::is_cpu_enabled() ||
      at::autocast::get_autocast_cpu_dtype() != at::kBFloat16)
    return false;
  if (x.dim() != 2 || weight.dim() != 2 || x.size(1) != weight.size(1)) return false;
  if (!float_or_bf16_cpu(x) || !float_or_bf16_cpu(weight)) return false;
  if (bias.defined() &&
      (!float_or_bf16_cpu(bias) || bias.dim() != 1 || bias.size(0) != weight.size(0)))
    return false;
  return matmul_for(x.size(0), x.size(1), weight.size(0), bias.defined()).has_value();
}

at::Tensor bf16_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return Bf16Linear::apply(x, weight, bias.defined() ? bias : at::empty({0}, weight.options()),
                           bias.defined());
}

#else

bool bf16_linear_applies(const at::Tensor&, const at::Tensor&, const at::Tensor&) { return false; }
at::Tensor bf16_linear(const at::Tensor&, const at::Tensor&, const at::Tensor&) {
  TORCH_CHECK(false, "hlm was built without oneDNN");
}

#endif

}  // namespace hlm
