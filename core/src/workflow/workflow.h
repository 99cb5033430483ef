// Workflows: load a YAML workflow plus key=value overrides, validate every key and type against
// the declared parameters before any work starts, and expand it into a DAG of stage instances.
#pragma once
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hlm/plugin.h"

namespace hlm::workflow {

// One declared parameter of a stage kind, a plugin or the settings block.
// type: "int", "float", "bool", "string", "list" (of scalars), "list:<type>" (each element of
// that type, e.g. "list:plugin:dataset"), "map" (free-form) or "plugin:<kind>" (a block
// `{plugin: <name>, ...}` whose other keys are that plugin's own parameters).
// default_json is JSON text; it is ignored when required is true. A default of null makes the
// parameter optional with no value.
struct ParamSpec {
  std::string name;
  std::string type;
  std::string default_json;
  std::string help;
  bool required = false;
};

// A declaration from a plugin descriptor; default_json == nullptr means required.
ParamSpec from_decl(const hlm_param_decl& decl);

// What a workflow may contain: stage kinds and plugins with their parameters, and the keys of
// the settings block. Filled by the caller (built-in stages, loaded plugins).
class Schema {
 public:
  // Starts with the settings (metrics_port, metrics_bind, runs_dir) and the runner block's
  // keys (runner_params.cpp).
  Schema();
  // Throws hlm::InternalError for a duplicate kind or a malformed spec.
  void add_stage_kind(const std::string& kind, std::vector<ParamSpec> params);
  // Throws hlm::PluginError for a duplicate (kind, name) or a malformed spec.
  void add_plugin(const std::string& kind, const std::string& name, std::vector<ParamSpec> params);
  void set_settings(std::vector<ParamSpec> settings);
  // A plugin library that did not load, with the reason naming it: an unknown plugin name
  // in a workflow is reported with these, since one of them may be the plugin meant.
  void add_refused_library(const std::string& reason) { refused_.push_back(reason); }
  std::string refused_note() const;

  // nullptr when unknown.
  const std::vector<ParamSpec>* stage_kind(const std::string& kind) const;
  const std::vector<ParamSpec>* plugin(const std::string& kind, const std::string& name) const;
  const std::vector<ParamSpec>& settings() const { return settings_; }
  const std::vector<ParamSpec>& runner() const { return runner_; }
  std::vector<std::string> stage_kinds() const;
  std::vector<std::string> plugin_names(const std::string& kind) const;

 private:
  std::map<std::string, std::vector<ParamSpec>> stage_kinds_;
  std::map<std::string, std::map<std::string, std::vector<ParamSpec>>> plugins_;
  std::vector<ParamSpec> settings_;
  std::vector<ParamSpec> runner_;
  std::vector<std::string> refused_;
};

// One node of the expanded DAG. A stage without a matrix has one instance whose id is the stage
// id; a matrix stage `pretrain` with {threads: [1, 2]} has `pretrain[threads=1]` and
// `pretrain[threads=2]` (matrix keys in sorted order, so ids do not depend on key order).
struct StageInstance {
  std::string id;
  std::string base_id;
  std::string kind;
  std::vector<std::string> needs;  // instance ids; needing a matrix stage means all of it
  nlohmann::json params;           // interpolated, typed, defaults filled, plugin blocks too
  nlohmann::json matrix_values;    // {param path: value} for this instance, {} without matrix
  std::string file;                // where the stage is declared
  int line = 0;                    // 1-based
  int column = 0;                  // 1-based
};

// A stage that does not run because its `when:` condition does not hold, or because it needs
// such a stage; reason says which.
struct LeftOutStage {
  std::string id;
  std::string reason;
};

struct Workflow {
  std::string name;
  std::string file;
  nlohmann::json vars;                 // interpolated
  nlohmann::json settings;             // typed, defaults filled
  nlohmann::json runner;               // where it runs (kind local or slurm), defaults filled
  std::vector<StageInstance> stages;   // topological order, ties broken by file order
  std::vector<LeftOutStage> left_out;  // stages whose condition does not hold, in run order

  // A workflow YAML equivalent to this one (overrides applied, vars substituted, defaults
  // filled); loading it again gives the same instances. Written to each run directory.
  std::string resolved_yaml() const;
};

// Reads, overrides, interpolates, validates and expands a workflow. Throws hlm::ConfigError
// with "FILE:LINE:COLUMN: message (hint)" (or "override 'k=v': ..." for an override) on the
// first problem found.
// Overrides: "stage.param=value", "stage.block.param=value", "stage.matrix.param=[1,2]",
// "vars.name=value", "settings.key=value", "runner.key=value", "name=value"; the value is
// parsed as YAML.
// Overriding a parameter the stage sweeps with its matrix replaces the sweep.
// Matrix keys may be dotted paths into plugin blocks ("model.layers: [2, 4]"); a plugin block
// written without `plugin:` ("model.layers=4") keeps the plugin of the parameter's default.
Workflow load_workflow(const std::string& path, const std::vector<std::string>& overrides,
                       const Schema& schema);
Workflow load_workflow_text(const std::string& text, const std::string& file_label,
                            const std::vector<std::string>& overrides, const Schema& schema);

// Sorted keys, no whitespace, shortest round-trip floats: equal values give equal text, so
// the result can be hashed for cache keys.
std::string canonical_json(const nlohmann::json& value);

// A stage instance's cache key and one line saying whether a finished stage with that key
// would be reused, and if not, what differs from the newest one that finished.
struct PlannedCache {
  std::string key;
  std::string reuse;
};
// Returns the cache key of an instance given the keys of the instances it needs (already
// computed, since the plan walks in topological order).
using CacheKeyFn = std::function<PlannedCache(
    const StageInstance& instance, const std::map<std::string, std::string>& needed_keys)>;

std::string dry_run_plan(const Workflow& workflow, const CacheKeyFn& cache_key = {});

}  // namespace hlm::workflow
