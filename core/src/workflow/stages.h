// The stages list of a workflow: each stage checked (keys, id, kind, needs, params, matrix),
// expanded over its matrix and ordered by its needs.
#pragma once
#include <vector>

#include "workflow/node.h"
#include "workflow/workflow.h"

namespace hlm::workflow::detail {

// stages is the interpolated "stages" node (a list). Returns instances in run order.
std::vector<StageInstance> build_stages(const Node& stages, const Schema& schema);

}  // namespace hlm::workflow::detail
