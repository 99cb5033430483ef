// Where this process sits in a data-parallel job, read from the torchrun variables (RANK,
// LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or SLURM's.
#pragma once
#include <string>

namespace hlm {

struct DistEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // torchrun with a static rendezvous (--master-addr, --nnodes N) already serves the store at
  // MASTER_ADDR:MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True): every rank is a client there,
  // under the prefix /worker/attempt_<TORCHELASTIC_RESTART_COUNT>, as torch's own ranks are.
  bool agent_store = false;
  int agent_restart_count = 0;

  // torchrun variables first; else, inside a SLURM allocation, SLURM_PROCID, SLURM_LOCALID,
  // SLURM_NTASKS, SLURM_NODEID with SLURM_TASKS_PER_NODE (`2(x3),1` forms) for the node's
  // rank count, and MASTER_ADDR (when unset) from the first host of SLURM_JOB_NODELIST, which
  // must resolve. A single process when neither is set. Throws ConfigError naming the
  // variable when the layout does not add up or the master host is unknown.
  static DistEnv from_environment();
  bool distributed() const { return world_size > 1; }
};

}  // namespace hlm
