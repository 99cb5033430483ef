// Type checks of parameter values against their declarations (ParamSpec), including nested
// plugin blocks, with defaults filled in.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workflow/node.h"
#include "workflow/workflow.h"

namespace hlm::workflow::detail {

// True for the type strings ParamSpec documents.
bool is_valid_type(const std::string& type);

// Checks a map of parameters (a null node counts as empty) against specs: unknown keys,
// missing required ones and types. owner names the block in messages ("stage 'pretrain'").
nlohmann::json check_params(const Node& params, const std::vector<ParamSpec>& specs,
                            const std::string& owner, const Schema& schema);

// Checks one value against a type. what names it in messages ("'threads' in stage 'x'").
nlohmann::json check_value(const Node& value, const std::string& type, const std::string& what,
                           const Schema& schema);

// The default of an optional spec as JSON (null when it has none). Throws ConfigError at loc
// if default_json does not parse.
nlohmann::json default_of(const ParamSpec& spec, const Loc& loc);

}  // namespace hlm::workflow::detail
