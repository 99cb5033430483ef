// Runs a validated workflow: creates the run directory, reuses cached stages, runs the rest
// in order, writes a manifest per stage and report.md at the end.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "launch/rank_launcher.h"
#include "plugin/plugin_host.h"
#include "workflow/workflow.h"

namespace hlm {

struct RunOptions {
  std::vector<std::string> overrides;  // as given on the command line, recorded in the run dir
  std::string runs_dir;                // "" = settings.runs_dir or "runs"
  std::string resume_dir;              // continue this run directory instead of a new one
  int metrics_port = -1;               // -1 = settings.metrics_port; 0 = any free port
  RankLauncher launcher;               // how training stages start their ranks
};

// Stage kinds and plugin parameters, for validation.
workflow::Schema build_schema(const PluginHost& plugins);

// The absolute runs folder: the given one, else settings.runs_dir, else "runs".
std::string resolve_runs_dir(const workflow::Workflow& workflow, const std::string& runs_dir);

// Creates a new run directory under runs_dir with the workflow as resolved and the overrides
// given; returns its absolute path. `hlm run --resume` (or a submitted job) runs it.
std::string start_run_directory(const workflow::Workflow& workflow, const std::string& runs_dir,
                                const std::vector<std::string>& overrides);

// The runs folder (and with it the stage cache) a run directory belongs to: the one recorded
// in its run.json, else the folder two levels up (runs/<workflow>/<run>).
std::string runs_dir_of_run(const std::string& run_dir);

// Returns the run directory. Throws hlm::Error when a stage fails (the run directory keeps
// what finished; `hlm run --resume DIR` continues it).
std::string run_workflow(const workflow::Workflow& workflow, const PluginHost& plugins,
                         const RunOptions& options);

}  // namespace hlm
