// hlm::gemm and hlm::linear (see hlm/gemm.h): a custom autograd function whose forward and
// backward products are oneDNN sgemm calls on contiguous float32 memory.
#include "hlm/gemm.h"

#include <ATen/ExpandUtils.h>
#include <ATen/autocast_mode.h>

#include "ops/linear_bf16.h"

#ifdef HLM_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace hlm {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor maybe_transpose(const at::Tensor& t, bool transpose) {
  return transpose ? t.transpose(-2, -1) : t;
}

// LibTorch's operators, autocast-aware: baddbmm/addmm when there is an addend, as the model
// code used before.
at::Tensor aten_gemm(const at::Tensor& a, const at::Tensor& b, bool ta, bool tb, double alpha,
                     const at::Tensor& c) {
  const at::Tensor x = maybe_transpose(a, ta), y = maybe_transpose(b, tb);
  if (a.dim() == 3) {
    if (c.defined()) return at::baddbmm(c, x, y, /*beta=*/1.0, alpha);
    return alpha == 1.0 ? at::bmm(x, y) : at::bmm(x, y).mul_(alpha);
  }
  if (c.defined()) return at::addmm(c, x, y, /*beta=*/1.0, alpha);
  return alpha == 1.0 ? at::mm(x, y) : at::mm(x, y).mul_(alpha);
}

#ifdef HLM_WITH_ONEDNN
bool onednn_applies(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  auto plain = [](const at::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided;
  };
  // In autocast regions LibTorch's operators pick the dtype (linear has its own bf16 path,
  // ops/linear_bf16.h; a oneDNN bf16 path for the attention products was tried in
  // `hlm bench pretrain` and was no faster).
  if (!onednn_products_enabled() || at::autocast::is_cpu_enabled()) return false;
  if (!plain(a) || !plain(b) || (c.defined() && !plain(c))) return false;
  if (a.dim() != b.dim() || (a.dim() != 2 && a.dim() != 3)) return false;
  return a.dim() == 2 || a.size(0) == b.size(0);
}

// c[i] = alpha op(a[i]) op(b[i]) (+ c_init broadcast), row-major, a and b contiguous.
at::Tensor onednn_gemm(const at::Tensor& a, const at::Tensor& b, bool ta, bool tb, double alpha,
                       const at::Tensor& c_init) {
  const bool batched = a.dim() == 3;
  const int64_t batch = batched ? a.size(0) : 1;
  const int64_t a_rows = a.size(-2), a_cols = a.size(-1);
  const int64_t b_rows = b.size(-2), b_cols = b.size(-1);
  const int64_t m = ta ? a_cols : a_rows, k = ta ? a_rows : a_cols;
  const int64_t n = tb ? b_rows : b_cols;
  TORCH_CHECK((tb ? b_cols : b_rows) == k, "hlm::gemm: inner sizes differ (", k, " and ",
              tb ? b_cols : b_rows, ")");
  std::vector<int64_t> shape = {m, n};
  if (batched) shape.insert(shape.begin(), batch);
  at::Tensor out;
  float beta = 0.0f;
  if (c_init.defined()) {
    out = c_init.expand(shape).contiguous();  // the addend enters through beta = 1
    if (out.data_ptr() == c_init.data_ptr()) out = out.clone();
    beta = 1.0f;
  } else {
    out = at::empty(shape, a.options());
  }
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = out.data_ptr<float>();
  for (int64_t i = 0; i < batch; ++i) {
    const dnnl_status_t status =
        dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, float(alpha), pa + i * a_rows * a_cols,
                   a_cols, pb + i * b_rows * b_cols, b_cols, beta, pc + i * m * n, n);
    TORCH_CHECK(status == dnnl_success, "oneDNN sgemm failed with status ", int(status));
  }
  return out;
}

struct GemmFunction : public torch::autograd::Function<GemmFunction> {
  // c is an empty tensor when has_c is false (autograd functions take no undefined inputs).
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const at::Tensor& c, bool has_c, bool ta, bool tb, double alpha) {
    const at::Tensor ac = a.contiguous(), bc = b.contiguous();
    ctx->save_for_backward({ac, bc});
    ctx->saved_data["ta"] = ta;
    ctx->saved_data["tb"] = tb;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["has_c"] = has_c;
    if (has_c) ctx->saved_data["c_sizes"] = c.sizes().vec();
    return onednn_gemm(ac, bc, ta, tb, alpha, has_c ? c : at::Tensor());
  }

  // For C = alpha op(A) op(B): dA = alpha G op(B)^T (or its transpose when A enters
  // transposed), dB = alpha op(A)^T G (likewise), dc = G summed to c's shape.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &a = saved[0], &b = saved[1];
    const bool ta = ctx->saved_data["ta"].toBool(), tb = ctx->saved_data["tb"].toBool();
    const double alpha = ctx->saved_data["alpha"].toDouble();
    const at::Tensor g = grads[0].contiguous();
    at::Tensor da, db, dc;
    if (ctx->needs_input_grad(0))
      da = ta ? onednn_gemm(b, g, tb, true, alpha, {}) : onednn_gemm(g, b, false, !tb, alpha, {});
    if (ctx->needs_input_grad(1))
      db = tb ? onednn_gemm(g, a, true, ta, alpha, {}) : onednn_gemm(a, g, !ta, false, alpha, {});
    if (ctx->saved_data["has_c"].toBool() && ctx->needs_input_grad(2))
      dc = at::sum_to(g, ctx->saved_data["c_sizes"].toIntVector());
    return {da, db, dc, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

#endif

}  // namespace

at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, bool transpose_a, bool transpose_b,
                double alpha, const at::Tensor& c) {
#ifdef HLM_WITH_ONEDNN
  if (onednn_applies(a, b, c))
    return GemmFunction::apply(a, b, c.defined() ? c : at::empty({0}, a.options()), c.defined(),
                               transpose_a, transpose_b, alpha);
#endif
  return aten_gemm(a, b, transpose_a, transpose_b, alpha, c);
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
#ifdef HLM_WITH_ONEDNN
  const at::Tensor x2 = x.dim() == 2 ? x : x.reshape({-1, x.size(-1)});
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = weight.size(0);
  if (bf16_linear_applies(x2, weight, bias)) return bf16_linear(x2, weight, bias).view(shape);
  if (onednn_applies(x2, weight, bias)) return gemm(x2, weight, false, true, 1.0, bias).view(shape);
#endif
  return at::linear(x, weight, bias);
}

}  // namespace hlm
