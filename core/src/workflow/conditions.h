// Stage conditions: a stage's `when:` block says what must hold for the stage to run. A stage
// whose condition does not hold is left out of the run, with the reason in the plan, the log
// and the report, and so is every stage that needs it. Conditions are checked when the
// workflow is loaded, after interpolation, so they can name folders and lists from vars.
//
//   when:
//     files_exist: {dir: "${vars.mitdb_dir}", names: "${vars.test_records}", suffix: .hea}
//
// files_exist holds when every dir/<name><suffix> exists (suffix may be a list: every name with
// each of them, for records of several files); an empty dir, or none of the files,
// means the stage is left out. Some of the files but not all is an error naming the missing
// ones: a test set with records missing would run quietly as another protocol.
#pragma once
#include <string>

#include "workflow/node.h"

namespace hlm::workflow::detail {

// Checks the shape of a `when:` block (keys and types). Throws ConfigError at the offending
// node; owner names the stage in messages.
void check_condition(const Node& when, const std::string& owner);

// "" when the condition holds, else why the stage is left out. Throws ConfigError when only
// some of the named files exist.
std::string unmet_condition(const Node& when, const std::string& owner);

}  // namespace hlm::workflow::detail
