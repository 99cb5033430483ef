// hlm::gelu (see hlm/activations.h).
#include "hlm/activations.h"
#include "ops/gelu_table.h"

namespace hlm {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const uint16_t* bits(const at::Tensor& t) {
  return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>());
}
uint16_t* mutable_bits(at::Tensor& t) {
  return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>());
}

struct GeluBf16 : torch::autograd::Function<GeluBf16> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_any) {
    const at::Tensor x = x_any.contiguous();
    at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
    gelu_bf16_forward(bits(x), mutable_bits(y), x.numel());
    ctx->save_for_backward({x});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const at::Tensor x = ctx->get_saved_variables()[0];
    const at::Tensor dy = grads[0].to(at::kBFloat16).contiguous();
    at::Tensor dx = at::empty_like(x, at::MemoryFormat::Contiguous);
    gelu_bf16_backward(bits(dy), bits(x), mutable_bits(dx), x.numel());
    return {dx};
  }
};

}  // namespace

at::Tensor gelu(const at::Tensor& x) {
  if (x.device().is_cpu() && x.layout() == at::kStrided && x.scalar_type() == at::kBFloat16)
    return GeluBf16::apply(x);
  return torch::gelu(x);
}

}  // namespace hlm
