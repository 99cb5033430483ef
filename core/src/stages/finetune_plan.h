// finetune's check against the stages it needs, before a run or a job starts
// (StageKind::check_plan).
#pragma once
#include "workflow/workflow.h"

namespace hlm {

// For tasks af and record: segment_beats against the context of the model fine-tuned, the
// model of the pretrain stage in the instance's needs, or the checkpoint's model where that
// stage takes one `from` another run (not checked where that run is absent or unfinished:
// a job may be submitted to start after it). Fine-tuning refuses a longer segment too, but
// only after the tokenize stages have run. Throws ConfigError naming the stage and the context.
void check_finetune_plan(const workflow::StageInstance& instance, const workflow::Workflow& wf);

}  // namespace hlm
