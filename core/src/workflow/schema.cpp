// The registry of stage kinds, plugins and settings that workflows are validated against.
// Declarations are checked when registered, so a plugin's bad default is blamed on the plugin.
#include <set>

#include "hlm/errors.h"
#include "workflow/params.h"
#include "workflow/runner_params.h"
#include "workflow/workflow.h"

namespace hlm::workflow {

ParamSpec from_decl(const hlm_param_decl& decl) {
  ParamSpec spec;
  spec.name = decl.name ? decl.name : "";
  spec.type = decl.type ? decl.type : "";
  spec.help = decl.help ? decl.help : "";
  spec.required = decl.default_json == nullptr;
  spec.default_json = decl.default_json ? decl.default_json : "";
  return spec;
}

namespace {

// Returns "" when the specs are well formed, else what is wrong.
std::string check_specs(const std::vector<ParamSpec>& specs, bool is_plugin, const Schema& schema) {
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    if (spec.name.empty()) return "a parameter has no name";
    if (!seen.insert(spec.name).second) return "parameter '" + spec.name + "' is declared twice";
    if (is_plugin && spec.name == "plugin") return "'plugin' is reserved for the plugin name";
    if (!detail::is_valid_type(spec.type)) {
      return "parameter '" + spec.name + "' has unknown type '" + spec.type +
             "' (expected int, float, bool, string, list, list:<type>, map or plugin:<kind>)";
    }
    if (spec.required) continue;
    try {
      const detail::Loc here{"declaration of '" + spec.name + "'", 0, 0};
      const nlohmann::json value = detail::default_of(spec, here);
      // Plugin blocks are checked where used: their plugins may not be registered yet.
      if (!value.is_null() && spec.type.find("plugin:") == std::string::npos) {
        detail::check_value(detail::from_json(value, here), spec.type, "the default", schema);
      }
    } catch (const ConfigError& e) {
      return e.what();
    }
  }
  return "";
}

}  // namespace

Schema::Schema() {
  settings_ = {
      {"metrics_port", "int", "0", "Prometheus exporter port; 0 picks any free port", false},
      {"metrics_bind", "string", "\"127.0.0.1\"",
       "address the /metrics endpoints of the run and its ranks bind (a node's address, or "
       "0.0.0.0, for a Prometheus on another host)",
       false},
      {"runs_dir", "string", "\"runs\"", "where run directories are created", false},
      {"stall_seconds", "float(0,]", "300",
       "a rank that finishes no training step for this long is reported stalled "
       "(hlm_train_stalled, a log line naming it and its phase, the stage's stalled_ranks); "
       "0 = never",
       false},
      {"rendezvous_timeout_seconds", "float(0,]", "300",
       "how long the ranks of a job wait for each other to start and connect (rank 0 names "
       "the ranks that never arrived; the others the endpoint they could not reach)",
       false},
  };
  runner_ = runner_param_specs();
}

void Schema::add_stage_kind(const std::string& kind, std::vector<ParamSpec> params) {
  if (stage_kinds_.count(kind)) throw InternalError("stage kind '{}' registered twice", kind);
  const std::string problem = check_specs(params, false, *this);
  if (!problem.empty()) throw InternalError("stage kind '{}': {}", kind, problem);
  stage_kinds_[kind] = std::move(params);
}

void Schema::add_plugin(const std::string& kind, const std::string& name,
                        std::vector<ParamSpec> params) {
  if (plugins_[kind].count(name)) {
    throw PluginError(
        "duplicate {} plugin '{}' (two libraries on the plugin path provide it; remove one)", kind,
        name);
  }
  const std::string problem = check_specs(params, true, *this);
  if (!problem.empty()) throw PluginError("{} plugin '{}': {}", kind, name, problem);
  plugins_[kind][name] = std::move(params);
}

std::string Schema::refused_note() const {
  std::string out;
  for (const auto& reason : refused_) out += "; not loaded: " + reason;
  return out;
}

void Schema::set_settings(std::vector<ParamSpec> settings) {
  const std::string problem = check_specs(settings, false, *this);
  if (!problem.empty()) throw InternalError("settings: {}", problem);
  settings_ = std::move(settings);
}

const std::vector<ParamSpec>* Schema::stage_kind(const std::string& kind) const {
  auto it = stage_kinds_.find(kind);
  return it == stage_kinds_.end() ? nullptr : &it->second;
}

const std::vector<ParamSpec>* Schema::plugin(const std::string& kind,
                                             const std::string& name) const {
  auto k = plugins_.find(kind);
  if (k == plugins_.end()) return nullptr;
  auto it = k->second.find(name);
  return it == k->second.end() ? nullptr : &it->second;
}

std::vector<std::string> Schema::stage_kinds() const {
  std::vector<std::string> out;
  for (const auto& entry : stage_kinds_) out.push_back(entry.first);
  return out;
}

std::vector<std::string> Schema::plugin_names(const std::string& kind) const {
  std::vector<std::string> out;
  auto k = plugins_.find(kind);
  if (k == plugins_.end()) return out;
  for (const auto& entry : k->second) out.push_back(entry.first);
  return out;
}

}  // namespace hlm::workflow
