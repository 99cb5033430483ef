// ${vars.x} and ${env.X} references in scalars. A scalar that is exactly one reference is
// replaced by the referenced node (a list stays a list, a number a number); inside a longer
// scalar the reference is replaced by text. "$${" is a literal "${".
#pragma once
#include "workflow/node.h"

namespace hlm::workflow::detail {

// Resolves references inside the vars block itself (vars may use env and earlier or later
// vars; a cycle is an error naming it).
void resolve_vars(Node& vars);

// Replaces references in every scalar under node, using already resolved vars.
void interpolate(Node& node, const Node& vars);

}  // namespace hlm::workflow::detail
