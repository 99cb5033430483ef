// The graph-safe forward flag (see hlm/cuda_graph.h).
#include "hlm/cuda_graph.h"

namespace hlm {

namespace {
thread_local bool graph_safe = false;
}  // namespace

bool graph_safe_forward() { return graph_safe; }

GraphSafeForward::GraphSafeForward() : was_(graph_safe) { graph_safe = true; }

GraphSafeForward::~GraphSafeForward() { graph_safe = was_; }

}  // namespace hlm
