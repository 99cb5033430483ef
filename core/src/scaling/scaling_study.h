// A scaling study's numbers: each point's repeats reduced to medians and ranges, the paper's
// ratios against the same configuration on one rank, and the model's prediction of every
// point with its error (see scale_analysis for how the runs are made).
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "scaling/scaling_grid.h"
#include "scaling/scaling_math.h"

namespace hlm {

// runs[i]: rank 0's result of each repeat of grid.points[i], with "backend",
// "bucket_cap_mb" and "samples_per_rank_step" added; ceilings[i]: per repeat, the slowest of N
// independent ranks' tokens/s (empty for 1 rank or when not measured), turned into the ceiling
// against the same repeat of the 1-rank point. Returns the study JSON: "points", "skipped",
// "scaling", "repeats", "cores", "axes" (docs/scaling.md lists the fields).
nlohmann::json summarize_study(const ScalingGrid& grid,
                               const std::vector<std::vector<nlohmann::json>>& runs,
                               const std::vector<std::vector<double>>& ceilings, Scaling scaling,
                               int repeats, int cores);

// Adds "predicted" to every multi-rank point: the model fed with the one-rank phases of the
// same configuration, the host's slowdown (1 / ceiling), the all-reduce fabric the point's
// ranks measured and the share of backward that hides the all-reduce: `overlap` when it is
// 0..1, else fitted on the study's first multi-rank point (marked "calibration"; the others
// are predictions).
void predict_measured_points(nlohmann::json& study, double overlap = -1);

}  // namespace hlm
