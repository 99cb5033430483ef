// The workflow's `runner` block: where its stages run. `kind: local` (the default) runs them in
// the `hlm run` process, training ranks as processes on this host; `kind: slurm` makes
// `hlm run` (like `hlm submit`) write an sbatch script into the run directory and submit it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workflow/workflow.h"

namespace hlm::workflow {

std::vector<ParamSpec> runner_param_specs();

// What is wrong with a typed runner block (an unknown kind, a count below 1), or "".
std::string runner_problem(const nlohmann::json& runner);

}  // namespace hlm::workflow
