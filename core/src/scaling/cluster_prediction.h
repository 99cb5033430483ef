// The study's configurations predicted on other hardware (by default the paper's: 1-4 nodes
// of 4 A100, NVLink within a node, HDR InfiniBand between nodes): compute from the GPU's peak
// and an assumed MFU, never under a measured step floor (kernel launches), split into phases as
// measured here; data wait as measured here (the same loader runs on the GPU node's host); the
// all-reduce on the given fabrics.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace hlm {

// `params`: the stage's `cluster` block (keys and defaults in cluster_prediction.cpp and
// docs/scaling.md); an unknown key is a ConfigError naming `where`. Returns {"params": the
// resolved block, "rows": one per configuration (threads per rank aside: the first 1-rank
// point of each) and GPU count}.
nlohmann::json predict_cluster(const nlohmann::json& study, const nlohmann::json& params,
                               const std::string& where);

}  // namespace hlm
