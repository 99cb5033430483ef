// load_workflow: parse, apply overrides, interpolate, validate, expand. Each step throws
// ConfigError at the first problem, before any stage runs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hlm/errors.h"
#include "workflow/interpolate.h"
#include "workflow/node.h"
#include "workflow/overrides.h"
#include "workflow/params.h"
#include "workflow/runner_params.h"
#include "workflow/stages.h"
#include "workflow/workflow.h"

namespace hlm::workflow {

using detail::fail;
using detail::Node;

namespace {

// Workflows are a few KiB; the bound keeps a wrong path (a data file, /dev/zero) from
// filling memory.
constexpr size_t kMaxWorkflowBytes = size_t(16) << 20;

const std::vector<std::string> kTopKeys = {"name", "vars", "settings", "runner", "stages"};

// The shape overrides rely on: a map with known keys whose stages are maps with ids.
void check_shape(const Node& root) {
  if (root.is_null()) fail(root.loc, "the workflow is empty (expected name: and stages:)");
  if (!root.is_map())
    fail(root.loc, "a workflow must be a map with name: and stages:, not " + root.describe());
  for (size_t i = 0; i < root.entries.size(); ++i) {
    const std::string& key = root.entries[i].first;
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end())
      fail(root.key_locs[i],
           "unknown top-level key '" + key + "'" + detail::suggest(key, kTopKeys));
  }
  for (const char* key : {"name", "stages"}) {
    if (!root.find(key)) fail(root.loc, std::string("missing required key '") + key + "'");
  }
  const Node& stages = *root.find("stages");
  if (!stages.is_seq() || stages.items.empty()) {
    fail(stages.loc,
         "'stages' must be a non-empty list of stages (- id: ...), not " + stages.describe());
  }
  for (const auto& stage : stages.items) {
    if (!stage.is_map())
      fail(stage.loc, "a stage must be a map with id: and kind:, not " + stage.describe());
    const Node* id = stage.find("id");
    if (!id) fail(stage.loc, "missing required key 'id' in a stage");
    if (!id->is_scalar()) fail(id->loc, "a stage id must be a name, not " + id->describe());
  }
}

nlohmann::json check_settings(const Node* settings, const Node& root, const Schema& schema) {
  Node block = settings ? *settings : Node();
  if (!settings) block.loc = root.loc;
  nlohmann::json out = detail::check_params(block, schema.settings(), "settings", schema);
  if (out.contains("metrics_port") && out["metrics_port"].is_number_integer()) {
    const auto port = out["metrics_port"].get<long long>();
    if (port < 0 || port > 65535) {
      const Node* at = block.find("metrics_port");
      fail(at ? at->loc : block.loc, "metrics_port " + std::to_string(port) +
                                         " is not a port (0 picks a free one; else 1-65535)");
    }
  }
  return out;
}

nlohmann::json check_runner(const Node* runner, const Node& root, const Schema& schema) {
  Node block = runner ? *runner : Node();
  if (!runner) block.loc = root.loc;
  nlohmann::json out = detail::check_params(block, schema.runner(), "runner", schema);
  const std::string problem = runner_problem(out);
  if (!problem.empty()) fail(block.loc, "runner: " + problem);
  return out;
}

}  // namespace

Workflow load_workflow_text(const std::string& text, const std::string& file_label,
                            const std::vector<std::string>& overrides, const Schema& schema) {
  Node root = detail::parse_yaml(text, file_label);
  check_shape(root);
  detail::apply_overrides(root, overrides, schema);

  Node vars = root.find("vars") ? *root.find("vars") : Node::map_at(root.loc);
  if (vars.is_null()) vars = Node::map_at(vars.loc);
  if (!vars.is_map())
    fail(vars.loc, "'vars' must be a map of names to values, not " + vars.describe());
  for (size_t i = 0; i < vars.entries.size(); ++i) {
    const std::string& key = vars.entries[i].first;
    if (key.empty() || key.find_first_of(".${} ") != std::string::npos)
      fail(vars.key_locs[i], "var name '" + key + "' cannot contain '.', '$', '{', '}' or spaces");
  }
  detail::resolve_vars(vars);
  for (auto& [key, node] : root.entries) {
    if (key != "vars") detail::interpolate(node, vars);
  }

  Workflow workflow;
  workflow.file = file_label;
  const Node& name = *root.find("name");
  if (!name.is_scalar() || !detail::is_identifier(name.text)) {
    fail(name.loc, "workflow name " + name.describe() + " must match [a-z0-9_-]+");
  }
  workflow.name = name.text;
  workflow.vars = detail::to_json(vars);
  workflow.settings = check_settings(root.find("settings"), root, schema);
  workflow.runner = check_runner(root.find("runner"), root, schema);
  workflow.stages = detail::build_stages(*root.find("stages"), schema, &workflow.left_out);
  return workflow;
}

Workflow load_workflow(const std::string& path, const std::vector<std::string>& overrides,
                       const Schema& schema) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status))
    throw ConfigError("{}: a folder, not a workflow file; give the workflow's .yaml file", path);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw ConfigError("{}: not a regular file (a device or pipe); give the workflow's .yaml file",
                      path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("{}: cannot read the workflow file (check the path)", path);
  std::string text(kMaxWorkflowBytes + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(size_t(in.gcount()));
  if (text.size() > kMaxWorkflowBytes)
    throw ConfigError("{}: larger than {} MiB, which no workflow needs; is it the right file?",
                      path, kMaxWorkflowBytes >> 20);
  return load_workflow_text(text, path, overrides, schema);
}

}  // namespace hlm::workflow
