// Pinning a rank's threads to cores of its own. Ranks that share a host otherwise move between
// cores at the scheduler's will; when two compute threads land on one core for a moment, that
// rank falls behind and every other rank waits for it at the next all-reduce. Pinned, ranks
// of one host keep to disjoint cores (what SLURM's --cpu-bind=cores or DeepSpeed's
// --bind_cores_to_rank do).
#pragma once
#include <string>
#include <vector>

namespace hlm {

struct CoreBinding {
  std::vector<int> cpus;  // logical CPUs this rank keeps to; empty: left unbound
  std::string reason;     // why (for the log): the cores taken, or why none were
};

// The CPUs of local rank `local_rank` of `local_ranks`, each wanting `threads`, out of the
// CPUs this process may use (`allowed`, in the order they should be handed out). Binds only
// when several ranks share the host and all of them fit: a lone rank, or ranks that would
// have to share cores, are better left to the scheduler.
CoreBinding plan_core_binding(const std::vector<int>& allowed, int local_rank, int local_ranks,
                              int threads);

// The CPUs this process may use (its affinity mask, e.g. a SLURM cpuset), ordered to spread
// ranks over physical cores before their hyperthread siblings: every CPU that is the first
// sibling of its core, then every second sibling, and so on (from
// /sys/devices/system/cpu/cpu<N>/topology/thread_siblings_list; mask order without it).
std::vector<int> allowed_cpus_spread();

// Plans the binding and applies it to every thread of this process (threads started later
// inherit it). Returns what was done; throws nothing (a binding the kernel refuses is logged
// in the reason and the rank runs unbound).
CoreBinding bind_rank_to_cores(int local_rank, int local_ranks, int threads);

}  // namespace hlm
