// Model plugins: a LibTorch module that maps token ids to hidden states and hidden states to
// vocabulary logits. The trainer adds objectives (causal or masked LM) and heads (fine-tune).
#pragma once
#include <torch/torch.h>

#include "hlm/plugin.h"

namespace hlm {

enum class Objective { kCausal, kMasked };

class Model {
 public:
  static constexpr const char* kPluginKind = "model";  // HLM_PLUGIN's descriptor kind
  virtual ~Model() = default;
  // The module that owns every parameter (for optimizers, checkpoints, all-reduce).
  virtual torch::nn::Module& module() = 0;
  // [batch, time] int64 token ids -> [batch, time, d_model].
  virtual at::Tensor hidden(const at::Tensor& tokens) = 0;
  // [batch, time, d_model] -> [batch, time, vocab] logits.
  virtual at::Tensor logits(const at::Tensor& hidden) = 0;
  virtual Objective objective() const = 0;
  virtual int64_t vocab_size() const = 0;
  virtual int64_t context() const = 0;
  virtual int64_t d_model() const = 0;
  // FLOPs per trained token (forward + backward), for MFU.
  virtual double flops_per_token() const = 0;
};

// GPT-2 initialisation for a transformer's children: N(0, 0.02) for Linear and Embedding
// weights, zero Linear biases; LayerNorm keeps its (1, 0).
inline void init_gpt2_weights(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& m : module.modules(/*include_self=*/false)) {
    if (auto* linear = m->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, 0.02);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = m->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, 0.02);
    }
  }
}

// FLOPs per trained token of a transformer with learned positions and a tied head, as the
// spec counts them: 6 * (non-embedding parameters + vocab * d_model) + 6 * n_layer * context *
// d_model (the attention scores). parameters counts everything, embeddings included.
inline double transformer_flops_per_token(int64_t parameters, int64_t vocab_size, int64_t context,
                                          int64_t d_model, int64_t n_layer) {
  const int64_t embeddings = (vocab_size + context) * d_model;
  return 6.0 * double(parameters - embeddings + vocab_size * d_model) +
         6.0 * double(n_layer * context * d_model);
}

// The Model over a transformer network `Net` (a TORCH_MODULE holder whose module has
// hidden(), logits() and options() with vocab_size, context, d_model and n_layer): what the
// gpt and bert plugins register, differing only in the network and the objective.
template <class Net, Objective kObjective>
class TransformerModel : public Model {
 public:
  template <class Options>
  explicit TransformerModel(const Options& options) : net_(options) {}
  torch::nn::Module& module() override { return *net_; }
  at::Tensor hidden(const at::Tensor& tokens) override { return net_->hidden(tokens); }
  at::Tensor logits(const at::Tensor& hidden) override { return net_->logits(hidden); }
  Objective objective() const override { return kObjective; }
  int64_t vocab_size() const override { return net_->options().vocab_size(); }
  int64_t context() const override { return net_->options().context(); }
  int64_t d_model() const override { return net_->options().d_model(); }
  double flops_per_token() const override {
    const auto& o = net_->options();
    int64_t parameters = 0;
    for (const auto& p : net_->parameters()) parameters += p.numel();
    return transformer_flops_per_token(parameters, o.vocab_size(), o.context(), o.d_model(),
                                       o.n_layer());
  }

 private:
  Net net_;
};

}  // namespace hlm
