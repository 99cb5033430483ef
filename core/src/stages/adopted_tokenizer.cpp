// Token settings taken from another tokenize stage (see adopted_tokenizer.h).
#include "stages/adopted_tokenizer.h"

#include "hlm/errors.h"
#include "hlm/tokenizer.h"

namespace hlm {

namespace {

// The tokenizer's identity without any codebook: what its settings alone make of the tokens.
std::string identity_of(nlohmann::json block, const PluginHost& plugins) {
  if (block.contains("codebook")) block["codebook"] = "";
  return plugins.create<Tokenizer>("tokenizer", block.at("plugin"), block)->identity();
}

}  // namespace

AdoptedTokenizer adopt_token_settings(const nlohmann::json& ours, const nlohmann::json& theirs,
                                      const PluginHost& plugins, const std::string& owner) {
  const std::string plugin = theirs.at("plugin");
  if (ours.at("plugin") != plugin)
    throw ConfigError(
        "{}: the codebook comes from a {} tokenizer, but this stage's tokenizer is {}; set its "
        "plugin to {}",
        owner, plugin, ours.at("plugin").get<std::string>(), plugin);
  AdoptedTokenizer out{ours, {}};
  std::string identity = identity_of(out.block, plugins);
  for (const auto& [key, value] : theirs.items()) {
    if (key == "plugin" || key == "codebook" || out.block.value(key, nlohmann::json()) == value)
      continue;
    nlohmann::json trial = out.block;
    trial[key] = value;
    std::string changed;
    try {
      changed = identity_of(trial, plugins);
    } catch (const PluginError&) {  // the plugin refused the settings
      continue;  // theirs alone does not go with ours (descriptors' own settings): ours stays
    }
    if (changed == identity) continue;  // not a token setting: ours stays
    out.changes.push_back(key + " " + out.block.value(key, nlohmann::json()).dump() + " -> " +
                          value.dump());
    out.block = std::move(trial);
    identity = changed;
  }
  if (identity != identity_of(theirs, plugins))
    throw ConfigError(
        "{}: this stage's tokenizer settings cannot be made to tokenize as the codebook's "
        "stage did ({} against {}); give the tokenizer block that stage used",
        owner, out.block.dump(), theirs.dump());
  return out;
}

nlohmann::json tokenizer_settings_of(const nlohmann::json& manifest) {
  const auto& results = manifest.at("results");
  if (results.contains("tokenizer_settings")) return results.at("tokenizer_settings");
  return manifest.at("params").at("tokenizer");
}

}  // namespace hlm
