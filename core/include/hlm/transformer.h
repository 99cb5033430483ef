// What the transformer model plugins (gpt, bert) share: their options, the workflow params
// that set them, and one pre-LayerNorm block whose attention takes a mask: a causal bias
// (decoder), a key-padding mask (encoder), or neither.
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>

namespace hlm {

struct TransformerOptions {
  TORCH_ARG(int64_t, vocab_size) = 512;
  TORCH_ARG(int64_t, context) = 128;
  TORCH_ARG(int64_t, d_model) = 256;
  TORCH_ARG(int64_t, n_layer) = 4;
  TORCH_ARG(int64_t, n_head) = 4;
  TORCH_ARG(int64_t, d_ff) = 1024;
  TORCH_ARG(double, dropout) = 0.0;
  // "fused": PyTorch's scaled-dot-product attention (its flash kernel on the CPU keeps no
  // [T, T] attention matrix for backward); "written": the products and softmax written out;
  // "auto": fused, except on bfloat16 CPU tensors (see use_fused_attention).
  TORCH_ARG(std::string, attention) = "auto";
};

// Whether a block with this `attention` mode runs the fused kernel on queries like q. auto
// writes attention out for bfloat16 on the CPU: there PyTorch's fused CPU kernel made a
// training step slower (docs/benchmarks.md), while in float32 it was as fast or faster and
// always smaller.
bool use_fused_attention(const std::string& mode, const at::Tensor& q);

// The options from a plugin's validated params (the keys of HLM_TRANSFORMER_PARAMS).
TransformerOptions transformer_options_from(const nlohmann::json& params);

// The hlm_param_decl rows of TransformerOptions, for a plugin's kParams table.
#define HLM_TRANSFORMER_PARAMS                                                                   \
  {"vocab_size", "int[5,]", "512", "tokens in the vocabulary (at least the tokenizer's)"},       \
      {"context", "int[1,65536]", "128", "context window in tokens (41..1024)"},                 \
      {"d_model", "int[1,]", "256", "embedding width"},                                          \
      {"n_layer", "int[1,]", "4", "transformer blocks"},                                         \
      {"n_head", "int[1,]", "4", "attention heads (d_model must be divisible)"},                 \
      {"d_ff", "int[1,]", "1024", "MLP hidden width"},                                           \
      {"dropout", "float[0,1)", "0.0", "dropout on attention weights"}, {                        \
    "attention", "string", "\"auto\"",                                                           \
        "fused (PyTorch's scaled-dot-product attention), written (products and softmax written " \
        "out) or auto (fused, except for bfloat16 on the CPU)"                                   \
  }

// Which keys a query may attend to. Either, both or neither may be set.
struct AttentionMask {
  at::Tensor causal_bias;  // [context, context] float: -inf above the diagonal, 0 elsewhere
  at::Tensor key_padding;  // [B, 1, 1, T] bool: true for keys to ignore
};

// x + attention(ln1(x)), then + MLP(ln2(.)) with GELU. Children are named ln1, qkv, proj,
// ln2, fc and out (checkpoints and the PyTorch export use these names).
class TransformerBlockImpl : public torch::nn::Module {
 public:
  explicit TransformerBlockImpl(const TransformerOptions& options);
  // x: [B, T, D] -> [B, T, D].
  at::Tensor forward(const at::Tensor& x, const AttentionMask& mask);

 private:
  // q, k, v: [B, H, T, hd] -> [B, H, T, hd].
  at::Tensor fused_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const AttentionMask& mask);
  at::Tensor explicit_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const AttentionMask& mask);

  int64_t n_head_;
  double dropout_;
  std::string attention_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, fc_{nullptr}, out_{nullptr};
};
TORCH_MODULE(TransformerBlock);

}  // namespace hlm
