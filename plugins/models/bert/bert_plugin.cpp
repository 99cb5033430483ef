// Registers the encoder as the `bert` model plugin (masked language model).
#include "bert.h"
#include "hlm/model.h"

namespace {

using hlm::bert::Bert;
using hlm::bert::BertOptions;

using BertModel = hlm::TransformerModel<Bert, hlm::Objective::kMasked>;

const hlm_param_decl kParams[] = {
    HLM_TRANSFORMER_PARAMS,
    {"mask_probability", "float(0,1)", "0.15",
     "share of content tokens the objective masks (80/10/10)"},
};

hlm::Model* make_bert(const nlohmann::json& p) {
  BertOptions o;
  static_cast<hlm::TransformerOptions&>(o) = hlm::transformer_options_from(p);
  o.mask_probability(p.at("mask_probability").get<double>());
  return new BertModel(o);
}

}  // namespace

HLM_PLUGIN(hlm::Model, "bert", "1.0.0",
           "pre-LayerNorm RoBERTa-style encoder with tied head (masked LM)", kParams, make_bert)
