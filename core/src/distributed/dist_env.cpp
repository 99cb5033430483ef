// Reads the rank layout from the environment (see dist_env.h).
#include "distributed/dist_env.h"

#include <netdb.h>

#include <cstdlib>
#include <numeric>
#include <string>

#include "hlm/errors.h"
#include "slurm/slurm_layout.h"

namespace hlm {

static bool read_int(const char* name, int& out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  const long value = std::strtol(v, &end, 10);
  if (*end != '\0') throw ConfigError("environment variable {}='{}' is not an integer", name, v);
  out = static_cast<int>(value);
  return true;
}

// The first host of the job's node list, checked to resolve: ranks on other nodes must reach
// it, so an unknown name is an error here rather than a rendezvous that never completes.
static std::string slurm_master_host() {
  const char* variable =
      std::getenv("SLURM_JOB_NODELIST") ? "SLURM_JOB_NODELIST" : "SLURM_NODELIST";
  const char* list = std::getenv(variable);
  if (!list || !*list)
    throw ConfigError(
        "SLURM_PROCID is set but neither MASTER_ADDR nor SLURM_JOB_NODELIST names the master host; "
        "start ranks with srun inside an allocation, or set MASTER_ADDR");
  const std::string host = expand_hostlist(list).front();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
    throw ConfigError(
        "{}='{}': its first host '{}' does not resolve ({}); set MASTER_ADDR to the "
        "master's address",
        variable, list, host, gai_strerror(rc));
  freeaddrinfo(found);
  return host;
}

static void read_slurm_layout(DistEnv& env) {
  if (!read_int("SLURM_NTASKS", env.world_size))
    throw ConfigError("SLURM_PROCID is set but SLURM_NTASKS is not; start ranks with srun");
  read_int("SLURM_LOCALID", env.local_rank);
  env.local_world_size = env.world_size;
  if (const char* per_node = std::getenv("SLURM_TASKS_PER_NODE")) {
    const std::vector<int> counts = expand_tasks_per_node(per_node);
    int node = 0, nodes = int(counts.size());
    read_int("SLURM_NODEID", node);
    read_int("SLURM_NNODES", nodes);
    const int tasks = std::accumulate(counts.begin(), counts.end(), 0);
    if (nodes != int(counts.size()) || tasks != env.world_size || node < 0 || node >= nodes)
      throw ConfigError(
          "SLURM_TASKS_PER_NODE='{}' gives {} nodes and {} tasks, but SLURM_NNODES={}, "
          "SLURM_NTASKS={} and SLURM_NODEID={}; the allocation's variables disagree",
          per_node, counts.size(), tasks, nodes, env.world_size, node);
    env.local_world_size = counts[size_t(node)];
  }
}

DistEnv DistEnv::from_environment() {
  DistEnv env;
  const bool torchrun = read_int("RANK", env.rank);
  if (torchrun) {
    read_int("WORLD_SIZE", env.world_size);
    read_int("LOCAL_RANK", env.local_rank);
    if (!read_int("LOCAL_WORLD_SIZE", env.local_world_size)) env.local_world_size = env.world_size;
    const char* agent_store = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
    env.agent_store = agent_store && std::string(agent_store) == "True";
    read_int("TORCHELASTIC_RESTART_COUNT", env.agent_restart_count);
  }
  const bool under_slurm = !torchrun && read_int("SLURM_PROCID", env.rank);
  if (under_slurm) read_slurm_layout(env);
  if (const char* addr = std::getenv("MASTER_ADDR"))
    env.master_addr = addr;
  else if (under_slurm)
    env.master_addr = slurm_master_host();
  read_int("MASTER_PORT", env.master_port);
  if (env.rank < 0 || env.rank >= env.world_size)
    throw ConfigError("RANK={} is outside WORLD_SIZE={}; check the launcher's variables", env.rank,
                      env.world_size);
  return env;
}

}  // namespace hlm
