// Expansion of a scaling grid (see scaling_grid.h).
#include "scaling/scaling_grid.h"

#include <algorithm>

#include "hlm/errors.h"

namespace hlm {
namespace {

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A folder-safe rendering: letters, digits, '.', '-' and '_' kept, anything else '_'.
std::string folder_safe(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out;
}

}  // namespace

std::string axes_text(const nlohmann::json& axes, const std::string& leave_out) {
  std::string out;
  for (const auto& [axis, value] : axes.items())
    if (axis != leave_out) out += (out.empty() ? "" : " ") + axis + "=" + value_text(value);
  return out;
}

ScalingGrid expand_grid(const std::vector<int>& world_sizes, const nlohmann::json& grid,
                        const std::vector<std::string>& allowed_axes, int default_threads,
                        int cores, bool oversubscribe, const std::string& where,
                        int nodes_available) {
  ScalingGrid m;
  std::vector<std::vector<nlohmann::json>> values;
  for (const auto& [axis, list] : grid.items()) {
    if (std::find(allowed_axes.begin(), allowed_axes.end(), axis) == allowed_axes.end()) {
      std::string names;
      for (const auto& a : allowed_axes) names += (names.empty() ? "" : ", ") + a;
      throw ConfigError("{}: grid axis '{}' is not a training param or resource (one of: {})",
                        where, axis, names);
    }
    if (!list.is_array() || list.empty())
      throw ConfigError("{}: grid axis '{}' needs a non-empty list of values", where, axis);
    if (axis == "nodes") {
      for (const auto& v : list)
        if (!v.is_number_integer() || v.get<int>() < 1)
          throw ConfigError("{}: grid axis 'nodes' takes whole numbers of at least 1 (got {})",
                            where, v.dump());
      if (std::find(list.begin(), list.end(), 1) == list.end())
        throw ConfigError(
            "{}: grid axis 'nodes' must include 1: the 1-rank baseline of every point runs on "
            "one node (got {})",
            where, list.dump());
    }
    m.axes.push_back(axis);
    values.emplace_back(list.begin(), list.end());
  }
  // Every combination, the first axis varying slowest.
  std::vector<size_t> index(values.size(), 0);
  for (bool more = true; more;) {
    ScalingPoint base;
    base.threads = default_threads;
    std::string dir;
    for (size_t a = 0; a < values.size(); ++a) {
      const auto& v = values[a][index[a]];
      base.axes[m.axes[a]] = v;
      if (m.axes[a] == "threads") base.threads = v.get<int>();
      if (m.axes[a] == "nodes") base.nodes = v.get<int>();
      dir += "-" + m.axes[a] + folder_safe(value_text(v));
    }
    base.config = axes_text(base.axes);
    base.baseline_config = axes_text(base.axes, "nodes");
    for (int world : world_sizes) {
      if (world == 1 && base.nodes > 1) continue;  // one rank is on one node
      ScalingPoint p = base;
      p.world_size = world;
      p.label = std::to_string(world) + (world == 1 ? " rank" : " ranks") +
                (p.config.empty() ? "" : ", " + p.config);
      p.dir = "w" + std::to_string(world) + dir;
      const int per_node = world / p.nodes;
      const int needed = per_node * std::max(1, p.threads);
      if (p.nodes > nodes_available)
        m.skipped.push_back(
            {p.label,
             "needs " + std::to_string(p.nodes) + " nodes, " +
                 (nodes_available == 1 ? std::string("this run has one host (run it in "
                                                     "a SLURM allocation of more)")
                                       : "the allocation has " + std::to_string(nodes_available))});
      else if (world % p.nodes != 0)
        m.skipped.push_back({p.label, std::to_string(world) + " ranks do not split evenly over " +
                                          std::to_string(p.nodes) + " nodes"});
      else if (needed > cores && !oversubscribe)
        m.skipped.push_back({p.label, "needs " + std::to_string(needed) +
                                          " cores (ranks x threads" +
                                          (p.nodes > 1 ? " per node" : "") + "), this host has " +
                                          std::to_string(cores)});
      else
        m.points.push_back(p);
    }
    more = false;
    for (size_t a = values.size(); a-- > 0;) {
      if (++index[a] < values[a].size()) {
        more = true;
        break;
      }
      index[a] = 0;
    }
  }
  return m;
}

}  // namespace hlm
