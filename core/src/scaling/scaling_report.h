// A scaling study as report.md tables and as CSV (one row per measured point).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scaling/scaling_plots.h"

namespace hlm {

// Measured points, skipped points, prediction against measurement with the bottleneck and
// its fix, the fabrics measured, the prediction on the paper's hardware and the plots
// (linked as `plot_prefix` + file name).
std::string scaling_report_md(const nlohmann::json& study, const std::vector<Plot>& plots,
                              const std::string& plots_note, const std::string& plot_prefix);

std::string scaling_csv(const nlohmann::json& study);

}  // namespace hlm
