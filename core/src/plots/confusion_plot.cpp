// Confusion matrix heat map (see confusion_plot.h).
#include "plots/confusion_plot.h"

#include <filesystem>
#include <sstream>

namespace hlm {

std::vector<Plot> render_confusion_plot(const std::string& name, const std::string& title,
                                        const std::vector<std::string>& classes,
                                        const std::vector<std::vector<int64_t>>& counts,
                                        const std::string& dir, std::string* note) {
  std::filesystem::create_directories(dir);
  plots::Script s;
  std::vector<Plot> figures;
  // One row per cell: predicted column, reference row (drawn top to bottom), row share, count.
  std::ostringstream cells;
  const size_t n = classes.size();
  for (size_t t = 0; t < n; ++t) {
    int64_t row_total = 0;
    for (size_t p = 0; p < n; ++p) row_total += counts[t][p];
    for (size_t p = 0; p < n; ++p)
      cells << p << " " << n - 1 - t << " "
            << (row_total > 0 ? double(counts[t][p]) / double(row_total) : 0.0) << " "
            << counts[t][p] << "\n";
  }
  std::string xtics, ytics;
  for (size_t c = 0; c < n; ++c) {
    const std::string sep = c == 0 ? "" : ", ";
    xtics += sep + plots::quoted(classes[c]) + " " + std::to_string(c);
    ytics += sep + plots::quoted(classes[c]) + " " + std::to_string(n - 1 - c);
  }
  const std::string range = "[-0.5:" + std::to_string(n) + "-0.5]";
  const std::string block = s.block(cells.str());
  plots::add_plot(s, figures, dir, name, title,
                  "unset grid\nunset key\nset size ratio -1\nset xrange " + range +
                      "\nset yrange " + range + "\nset xtics (" + xtics + ")\nset ytics (" + ytics +
                      ")\nset xlabel 'predicted'\nset ylabel 'reference'\nset cbrange [0:1]\n"
                      "set cblabel 'share of the reference row'\n"
                      "set palette defined (0 'white', 1 '#2166ac')\n",
                  "plot " + block + " using 1:2:3 with image, " + block +
                      " using 1:2:(sprintf('%d', $4)) with labels font ',11'");
  return plots::draw(s, figures, dir, name, note);
}

}  // namespace hlm
