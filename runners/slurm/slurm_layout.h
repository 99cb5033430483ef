// SLURM's compact notations, expanded the way SLURM does: host lists such as
// `node[01-04,07],gpu3` (SLURM_JOB_NODELIST) and task counts such as `2(x3),1`
// (SLURM_TASKS_PER_NODE). Ranks read their layout from these inside an allocation.
#pragma once
#include <string>
#include <vector>

namespace hlm {

// Every host of a SLURM host list, in order (`scontrol show hostnames` gives the same).
// Ranges keep the zero padding of their first number (`n[08-10]` is n08 n09 n10); several
// bracket groups in one name multiply (`r[1-2]-n[1-2]` is r1-n1 r1-n2 r2-n1 r2-n2).
// Throws ConfigError naming the list for an empty list, an unclosed bracket or a range whose
// end comes before its start.
std::vector<std::string> expand_hostlist(const std::string& list);

// The task count of every node of SLURM_TASKS_PER_NODE: `2(x3),1` is 2, 2, 2, 1. Throws
// ConfigError naming the value when it is not of that form.
std::vector<int> expand_tasks_per_node(const std::string& value);

}  // namespace hlm
