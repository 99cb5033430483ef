// Command-line overrides ("pretrain.threads=4", "vars.codes=[32,64]") applied to the parsed tree
// before interpolation and validation, so overridden values get the same checks.
#pragma once
#include <string>
#include <vector>

#include "workflow/node.h"
#include "workflow/workflow.h"

namespace hlm::workflow::detail {

// root is a map whose "stages" (if any) is a list of maps with scalar ids. Nodes an override
// adds are located at "override '<text>'", so later errors name the override.
void apply_overrides(Node& root, const std::vector<std::string>& overrides, const Schema& schema);

// Sets value at a dotted path under map, creating blocks on the way. Throws at loc when a node
// on the path is not a map (what names the path for the message).
void set_path(Node& map, const std::vector<std::string>& path, Node value, const Loc& loc);
// Removes a dotted path if present.
void erase_path(Node& map, const std::vector<std::string>& path);

std::vector<std::string> split_path(const std::string& path);

}  // namespace hlm::workflow::detail
