// The study's figures, like the paper's Figures 3-6, drawn by gnuplot as SVG and PNG: time
// against CPUs per task for each rank count; time bars with speedup against ideal;
// efficiency (measured and predicted); overhead.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plots/gnuplot.h"

namespace hlm {

// Writes the data, the gnuplot script and the images into `dir`. Without gnuplot on PATH
// (Debian package gnuplot-nox), or if it fails, returns what it drew and says why in
// `*note`.
std::vector<Plot> render_scaling_plots(const nlohmann::json& study, const std::string& dir,
                                       std::string* note);

}  // namespace hlm
