// Registers the GPT as the `gpt` model plugin (causal language model).
#include "gpt.h"
#include "hlm/model.h"

namespace {

using hlm::gpt::Gpt;
using hlm::gpt::GptOptions;

using GptModel = hlm::TransformerModel<Gpt, hlm::Objective::kCausal>;

const hlm_param_decl kParams[] = {
    {"vocab_size", "int", "512", "tokens in the vocabulary (at least the tokenizer's)"},
    {"context", "int", "128", "context window in tokens (41..1024)"},
    {"d_model", "int", "256", "embedding width"},
    {"n_layer", "int", "4", "transformer blocks"},
    {"n_head", "int", "4", "attention heads (d_model must be divisible)"},
    {"d_ff", "int", "1024", "MLP hidden width"},
    {"dropout", "float", "0.0", "dropout on attention weights"},
};

hlm::Model* make_gpt(const nlohmann::json& p) {
  GptOptions o;
  o.vocab_size(p.at("vocab_size").get<int64_t>())
      .context(p.at("context").get<int64_t>())
      .d_model(p.at("d_model").get<int64_t>())
      .n_layer(p.at("n_layer").get<int64_t>())
      .n_head(p.at("n_head").get<int64_t>())
      .d_ff(p.at("d_ff").get<int64_t>())
      .dropout(p.at("dropout").get<double>());
  return new GptModel(o);
}

}  // namespace

HLM_PLUGIN(hlm::Model, "gpt", "1.0.0",
           "pre-LayerNorm GPT decoder with tied head (causal LM)", kParams, make_gpt)
