// The points of a scaling study: every combination of the grid's axes (training params
// and resources) at every world size, less those this machine cannot run, each with why.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hlm {

struct ScalingPoint {
  int world_size = 1;
  int threads = 1;                                 // per rank
  int nodes = 1;                                   // hosts the ranks spread over, evenly
  nlohmann::json axes = nlohmann::json::object();  // axis -> value, world size excluded
  std::string config;  // the axes as "threads=2 context=256" ("" with no axes)
  // The config of the 1-rank point this one is measured against: config less nodes (one rank
  // runs on one node whatever the point spreads over).
  std::string baseline_config;
  std::string label;  // "2 ranks, threads=2 context=256"
  std::string dir;    // "w2-threads2-context256": a folder name
};

struct SkippedPoint {
  std::string label;
  std::string reason;
};

struct ScalingGrid {
  std::vector<std::string> axes;  // in the workflow's order
  std::vector<ScalingPoint> points;
  std::vector<SkippedPoint> skipped;
};

// A configuration as text: "context=256 threads=2", axes in key order, `leave_out` skipped.
std::string axes_text(const nlohmann::json& axes, const std::string& leave_out = "");

// `grid` maps an axis to its list of values; `allowed_axes` are the names it may use.
// Points needing more cores than `cores` on a node (its ranks x threads) are skipped unless
// `oversubscribe`. `default_threads` is the threads per rank where threads is no axis.
// The axis `nodes` spreads each point's ranks evenly over that many hosts: points needing
// more than `nodes_available` (1 outside a SLURM allocation), or whose ranks do not split
// evenly, are skipped with why; 1-rank points exist for nodes=1 only.
// ConfigError naming `where` for an unknown axis, an empty list, a nodes value below 1 or
// nodes without 1.
ScalingGrid expand_grid(const std::vector<int>& world_sizes, const nlohmann::json& grid,
                        const std::vector<std::string>& allowed_axes, int default_threads,
                        int cores, bool oversubscribe, const std::string& where,
                        int nodes_available = 1);

}  // namespace hlm
