// SLURM's client commands (sbatch, scontrol) run from hlm, and what hlm reads from them.
#pragma once
#include <string>
#include <vector>

#include "util/subprocess.h"

namespace hlm {

// The node's NodeAddr as SLURM knows it (`scontrol show node -o NAME`): the address SLURM itself
// reaches the node on. Throws ConfigError naming the node when scontrol does not know it.
std::string slurm_node_address(const std::string& node);

// The first host of this allocation's node list (SLURM_JOB_NODELIST expanded). Throws
// ConfigError outside an allocation.
std::string first_allocated_node();

}  // namespace hlm
