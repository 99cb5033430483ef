// The tokenizer of a tokenize stage that tokenizes with another stage's codebook (its
// `codebook_from`, or a tokenize stage it needs): every setting that changes the tokens is
// taken from that stage, so that a token means here what it meant there (a foundation's
// codes, window and lead); the settings that leave the tokens alone (threads, the descriptors
// a head reads beside them) stay this stage's own.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugin/plugin_host.h"

namespace hlm {

struct AdoptedTokenizer {
  nlohmann::json block;              // the tokenizer block to build
  std::vector<std::string> changes;  // "codes 32 -> 256", one per setting taken
};

// `ours` with the token settings of `theirs` (both complete plugin blocks, as a stage's
// manifest holds them). A setting is a token setting when it changes the tokenizer's
// identity. Throws ConfigError naming `owner` when the plugins differ, or when no choice of
// settings gives their identity.
AdoptedTokenizer adopt_token_settings(const nlohmann::json& ours, const nlohmann::json& theirs,
                                      const PluginHost& plugins, const std::string& owner);

// The tokenizer block a finished tokenize stage tokenized with: its adopted one when it
// adopted one (results.tokenizer_settings), else its params' own.
nlohmann::json tokenizer_settings_of(const nlohmann::json& manifest);

}  // namespace hlm
