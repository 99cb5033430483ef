// Running SLURM's client programs (see slurm_commands.h).
#include "slurm/slurm_commands.h"

#include <cstdlib>
#include <sstream>

#include "hlm/errors.h"
#include "slurm/slurm_layout.h"
#include "util/subprocess.h"

namespace hlm {

std::string slurm_node_address(const std::string& node) {
  const CommandOutput shown = run_program({"scontrol", "show", "node", "-o", node});
  std::istringstream fields(shown.output);
  for (std::string field; shown.status == 0 && fields >> field;)
    if (field.rfind("NodeAddr=", 0) == 0 && field.size() > 9) return field.substr(9);
  throw ConfigError(
      "node '{}' (the first host of SLURM_JOB_NODELIST): scontrol show node gives no NodeAddr "
      "({}); set MASTER_ADDR to the address of the node that runs rank 0",
      node, shown.output.empty() ? "no output" : shown.output);
}

std::string first_allocated_node() {
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (!list || !*list)
    throw ConfigError(
        "the srun launcher runs inside a SLURM allocation, but SLURM_JOB_NODELIST is not set; "
        "submit with hlm submit (or sbatch), or run without --launcher srun");
  return expand_hostlist(list).front();
}

}  // namespace hlm
