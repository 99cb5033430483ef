// Registers the GPT as the `gpt` model plugin (causal language model).
#include "gpt.h"
#include "hlm/model.h"

namespace {

using hlm::gpt::Gpt;
using hlm::gpt::GptOptions;

using GptModel = hlm::TransformerModel<Gpt, hlm::Objective::kCausal>;

const hlm_param_decl kParams[] = {HLM_TRANSFORMER_PARAMS};

hlm::Model* make_gpt(const nlohmann::json& p) {
  return new GptModel(hlm::transformer_options_from(p));
}

}  // namespace

HLM_PLUGIN(hlm::Model, "gpt", "1.0.0", "pre-LayerNorm GPT decoder with tied head (causal LM)",
           kParams, make_gpt)
