// hlm::gemm and hlm::linear (see hlm/gemm.h) on LibTorch's operators.
#include "hlm/gemm.h"

namespace hlm {
namespace {

at::Tensor maybe_transpose(const at::Tensor& t, bool transpose) {
  return transpose ? t.transpose(-2, -1) : t;
}

}  // namespace

// baddbmm/addmm when there is an addend: the scaling and the addend ride in the GEMM (beta = 1)
// instead of passes of their own.
at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, bool transpose_a, bool transpose_b,
                double alpha, const at::Tensor& c) {
  const at::Tensor x = maybe_transpose(a, transpose_a), y = maybe_transpose(b, transpose_b);
  if (a.dim() == 3) {
    if (c.defined()) return at::baddbmm(c, x, y, /*beta=*/1.0, alpha);
    return alpha == 1.0 ? at::bmm(x, y) : at::bmm(x, y).mul_(alpha);
  }
  if (c.defined()) return at::addmm(c, x, y, /*beta=*/1.0, alpha);
  return alpha == 1.0 ? at::mm(x, y) : at::mm(x, y).mul_(alpha);
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return at::linear(x, weight, bias);
}

}  // namespace hlm
