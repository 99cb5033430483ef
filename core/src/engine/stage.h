// The contract between the engine and a stage kind: a stage reads its resolved params and the
// manifests of the stages it needs, writes artifacts into its own folder and returns what it
// made. Stage kinds are registered explicitly in stage_registry.cpp.
#pragma once
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "launch/rank_launcher.h"
#include "plugin/plugin_host.h"
#include "workflow/workflow.h"

namespace hlm {

struct StageContext {
  const workflow::StageInstance& instance;
  const workflow::Workflow& workflow;
  const PluginHost& plugins;
  std::string run_dir;
  std::string stage_dir;                             // this stage's outputs
  std::map<std::string, nlohmann::json> inputs;      // needed instance id -> its manifest
  std::function<void(const std::string&)> progress;  // one short line for the console
  RankLauncher launcher;                             // how training stages start their ranks

  const nlohmann::json& params() const { return instance.params; }
  // The manifest of the first needed stage of this kind; ConfigError naming the stage if
  // there is none.
  const nlohmann::json& input_of_kind(const std::string& kind) const;
  std::vector<const nlohmann::json*> inputs_of_kind(const std::string& kind) const;
};

struct StageOutput {
  nlohmann::json artifacts = nlohmann::json::object();  // name -> absolute path
  nlohmann::json results = nlohmann::json::object();    // numbers for reports and tests
  std::string report_md;                                // this stage's section of report.md
};

struct StageKind {
  std::string kind;
  std::string version;  // bump when outputs change for the same params: part of the cache key
  std::vector<workflow::ParamSpec> params;
  std::function<StageOutput(StageContext&)> run;
  // What the stage reads from outside the run directory, as JSON that changes whenever that
  // does (a dataset's records: names, sizes, modification times): part of the cache key.
  std::function<nlohmann::json(const nlohmann::json& params, const PluginHost&)> external_inputs;
  // Checks what only this machine can tell (the device asked for is there) for one instance,
  // before any stage of the run starts; throws ConfigError naming the stage. May be null.
  std::function<void(const workflow::StageInstance&)> preflight;
  // Checks one instance against the stages it needs, on any machine, before a run or a job
  // starts (hlm run, submit, validate): what they fix before it runs, such as the context of
  // the model it fine-tunes. Throws ConfigError naming the stage. May be null.
  std::function<void(const workflow::StageInstance&, const workflow::Workflow&)> check_plan;
};

const std::vector<StageKind>& stage_kinds();
const StageKind& stage_kind(const std::string& kind);
// Every instance's StageKind::check_plan, in run order; throws the first ConfigError.
void check_plan(const workflow::Workflow& wf);

// Stage kinds, one source file each under core/src/stages/.
StageKind tokenize_stage();
StageKind pretrain_stage();
StageKind finetune_stage();
StageKind evaluate_stage();
StageKind scale_analysis_stage();

}  // namespace hlm
