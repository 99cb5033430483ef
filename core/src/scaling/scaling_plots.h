// The study's figures, like the paper's Figures 3-6, drawn by gnuplot as SVG and PNG: time
// against CPUs per task for each rank count; time bars with speedup against ideal;
// efficiency (measured and predicted); overhead.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hlm {

struct Plot {
  std::string name;  // file stem: time_vs_threads, time_speedup, efficiency, overhead
  std::string title;
  std::string svg, png;  // absolute paths
};

// Writes the data, the gnuplot script and the images into `dir`. Without gnuplot on PATH
// (Debian package gnuplot-nox), or if it fails, returns what it drew and says why in
// `*note`.
std::vector<Plot> render_scaling_plots(const nlohmann::json& study, const std::string& dir,
                                       std::string* note);

// A line plot of one series (the loss curve of a training stage) as SVG and PNG.
std::vector<Plot> render_line_plot(const std::string& name, const std::string& title,
                                   const std::string& x_label, const std::string& y_label,
                                   const std::vector<double>& y, const std::string& dir,
                                   std::string* note);

}  // namespace hlm
