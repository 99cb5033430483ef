// Registers the encoder as the `bert` model plugin (masked language model).
#include "bert.h"
#include "hlm/model.h"

namespace {

using hlm::bert::Bert;
using hlm::bert::BertOptions;

using BertModel = hlm::TransformerModel<Bert, hlm::Objective::kMasked>;

const hlm_param_decl kParams[] = {
    {"vocab_size", "int", "512", "tokens in the vocabulary (at least the tokenizer's)"},
    {"context", "int", "128", "context window in tokens (41..1024)"},
    {"d_model", "int", "256", "embedding width"},
    {"n_layer", "int", "4", "encoder blocks"},
    {"n_head", "int", "4", "attention heads (d_model must be divisible)"},
    {"d_ff", "int", "1024", "MLP hidden width"},
    {"dropout", "float", "0.0", "dropout on attention weights"},
    {"mask_probability", "float", "0.15", "share of content tokens the objective masks (80/10/10)"},
};

hlm::Model* make_bert(const nlohmann::json& p) {
  BertOptions o;
  o.vocab_size(p.at("vocab_size").get<int64_t>())
      .context(p.at("context").get<int64_t>())
      .d_model(p.at("d_model").get<int64_t>())
      .n_layer(p.at("n_layer").get<int64_t>())
      .n_head(p.at("n_head").get<int64_t>())
      .d_ff(p.at("d_ff").get<int64_t>())
      .dropout(p.at("dropout").get<double>())
      .mask_probability(p.at("mask_probability").get<double>());
  return new BertModel(o);
}

}  // namespace

HLM_PLUGIN(hlm::Model, "bert", "1.0.0",
           "pre-LayerNorm RoBERTa-style encoder with tied head (masked LM)", kParams, make_bert)
