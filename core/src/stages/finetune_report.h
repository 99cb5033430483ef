// The fine-tuning stage's report: what the head read and how it was trained, the trees beside
// it and their blend, early stopping, and what was held out for evaluation, as one paragraph.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tasks/head_options.h"

namespace hlm {

// `loss_line` opens it ("classification loss 1.9 -> 0.04 over 200 steps"); `task_results` is
// the stage's results block for the task (its "trees" when trees were fitted).
std::string finetune_report_md(const std::string& loss_line, const HeadOptions& head,
                               const std::string& task, const nlohmann::json& task_results,
                               size_t train_records, size_t validation_records, int64_t best_step,
                               const std::vector<std::string>& holdout, double tail);

}  // namespace hlm
