// Reads the rank layout from the environment (see dist_env.h).
#include "dist/dist_env.h"

#include <cstdlib>

#include "hlm/errors.h"

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

DistEnv DistEnv::from_environment() {
  DistEnv env;
  if (read_int("RANK", env.rank)) {
    read_int("WORLD_SIZE", env.world_size);
    read_int("LOCAL_RANK", env.local_rank);
    if (!read_int("LOCAL_WORLD_SIZE", env.local_world_size)) env.local_world_size = env.world_size;
  } else if (read_int("SLURM_PROCID", env.rank)) {
    read_int("SLURM_NTASKS", env.world_size);
    read_int("SLURM_LOCALID", env.local_rank);
    if (!read_int("SLURM_NTASKS_PER_NODE", env.local_world_size))
      env.local_world_size = env.world_size;
  }
  if (const char* addr = std::getenv("MASTER_ADDR")) env.master_addr = addr;
  read_int("MASTER_PORT", env.master_port);
  if (env.rank < 0 || env.rank >= env.world_size)
    throw ConfigError("RANK={} is outside WORLD_SIZE={}; check the launcher's variables", env.rank,
                      env.world_size);
  return env;
}

}  // namespace hlm
