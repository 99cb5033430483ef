// Ordering of stages by their needs: a topological order that keeps file order among stages
// that do not depend on each other, and a cycle reported with its path.
#pragma once
#include <string>
#include <vector>

#include "workflow/node.h"

namespace hlm::workflow::detail {

struct DagEdge {
  size_t target;  // index of the needed stage
  Loc loc;        // where the need is written
};

struct DagStage {
  std::string id;
  std::vector<DagEdge> needs;
};

// Indices of stages in run order: every stage after all it needs, ties in file (index) order.
// Throws ConfigError "cycle in needs: a -> b -> a" at the need that closes the cycle's start.
std::vector<size_t> topological_order(const std::vector<DagStage>& stages);

}  // namespace hlm::workflow::detail
