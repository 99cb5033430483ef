// The stages list of a workflow: each stage checked (keys, id, kind, needs, params, matrix),
// expanded over its matrix and ordered by its needs.
#pragma once
#include <vector>

#include "workflow/node.h"
#include "workflow/workflow.h"

namespace hlm::workflow::detail {

// stages is the interpolated "stages" node (a list). Returns instances in run order; stages
// left out by their `when:` condition (conditions.h), or by needing one that was, are added to
// left_out in run order instead.
std::vector<StageInstance> build_stages(const Node& stages, const Schema& schema,
                                        std::vector<LeftOutStage>* left_out = nullptr);

}  // namespace hlm::workflow::detail
