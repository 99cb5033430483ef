// A confusion matrix as a heat map (gnuplot, SVG and PNG): rows the reference classes, columns
// the predicted ones, each cell shaded by the share of its row (sensitivity on the diagonal)
// and labelled with its count, so rare classes are as readable as the dominant one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "plots/gnuplot.h"

namespace hlm {

// counts[t][p]: items of reference class t predicted as p. Draws DIR/NAME.svg and .png.
std::vector<Plot> render_confusion_plot(const std::string& name, const std::string& title,
                                        const std::vector<std::string>& classes,
                                        const std::vector<std::vector<int64_t>>& counts,
                                        const std::string& dir, std::string* note);

}  // namespace hlm
