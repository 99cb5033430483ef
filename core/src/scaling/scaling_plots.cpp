// gnuplot figures of a scaling study (see scaling_plots.h); the script stays beside the images
// (scaling.gp), so a figure can be restyled and redrawn.
#include "scaling/scaling_plots.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "plots/gnuplot.h"
#include "scaling/scaling_grid.h"

namespace hlm {
using plots::add_plot;
using plots::data_string;
using plots::draw;
using plots::quoted;
using plots::Script;

namespace {

std::string series_name(const std::string& config) { return config.empty() ? "all" : config; }

}  // namespace

std::vector<Plot> render_scaling_plots(const nlohmann::json& study, const std::string& dir,
                                       std::string* note) {
  std::filesystem::create_directories(dir);
  const auto& points = study.at("points");
  Script s;
  std::vector<Plot> plots;

  // Figure 3: time against CPUs per task, a line per rank count (and other axes).
  std::map<std::string, std::ostringstream> by_ranks;
  for (const auto& p : points) {
    const int n = p.at("world_size");
    const std::string key =
        std::to_string(n) + (n == 1 ? " rank " : " ranks ") + axes_text(p.at("axes"), "threads");
    by_ranks[key] << p.at("threads").get<int>() << " " << p.at("seconds").at("median") << " "
                  << p.at("seconds").at("min") << " " << p.at("seconds").at("max") << "\n";
  }
  std::string plot = "plot ";
  for (const auto& [key, rows] : by_ranks)
    plot += s.block(rows.str()) + " using 1:2:3:4 with yerrorlines title " + quoted(key) + ", ";
  add_plot(s, plots, dir, "time_vs_threads", "Training time against CPUs per task",
           "set logscale x 2\nset offsets graph 0.05, graph 0.05, 0, 0\n"
           "set xlabel 'CPUs per task (threads per rank)'\n"
           "set ylabel 'time (s, median; bars: range)'\n",
           plot.substr(0, plot.size() - 2));

  // Figure 4: time bars per point, with speedup against ideal.
  std::ostringstream bars;
  int index = 0, most_ranks = 1;
  for (const auto& p : points) most_ranks = std::max(most_ranks, p.at("world_size").get<int>());
  for (const auto& p : points)
    bars << index++ << " " << p.at("seconds").at("median") << " " << p.value("speedup", 0.0) << " "
         << p.at("world_size") << " " << data_string(p.at("label")) << "\n";
  const std::string b = s.block(bars.str());
  add_plot(s, plots, dir, "time_speedup", "Time and speedup against ideal",
           "set style fill solid 0.5\nset boxwidth 0.6\nset xtics rotate by -30\n"
           "set ylabel 'time (s)'\nset y2label 'speedup'\nset y2tics\nset ytics nomirror\n"
           "set xrange [-0.5:" +
               std::to_string(index) + "-0.5]\nset yrange [0:*]\nset y2range [0:" +
               std::to_string(most_ranks * 1.15) + "]\n",
           "plot " + b + " using 1:2:xtic(5) with boxes title 'time', " + b +
               " using 1:3 axes x1y2 with points pt 7 ps 1.5 title 'speedup', " + b +
               " using 1:4 axes x1y2 with points pt 6 ps 1.5 title 'ideal (N)'");

  // Figures 5 and 6: efficiency (measured and predicted) and overhead against ranks.
  std::map<std::string, std::ostringstream> efficiency, predicted, overhead;
  for (const auto& p : points) {
    if (!p.contains("efficiency")) continue;
    const std::string key = series_name(p.at("config"));
    const int n = p.at("world_size");
    efficiency[key] << n << " " << p.at("efficiency") << "\n";
    overhead[key] << n << " " << p.at("overhead_seconds") << "\n";
    if (p.contains("predicted"))
      predicted[key] << n << " " << p.at("predicted").at("efficiency") << "\n";
  }
  plot = "plot 1 with lines dt 2 lc rgb 'gray' title 'ideal', ";
  for (const auto& [key, rows] : efficiency)
    plot += s.block(rows.str()) + " using 1:2 with linespoints pt 7 title " +
            quoted("measured " + key) + ", ";
  for (const auto& [key, rows] : predicted)
    plot += s.block(rows.str()) + " using 1:2 with points pt 4 ps 1.5 title " +
            quoted("predicted " + key) + ", ";
  add_plot(s, plots, dir, "efficiency",
           study.at("scaling") == "weak" ? "Parallel efficiency E = T1 / TN"
                                         : "Parallel efficiency E = S / N",
           "set xlabel 'ranks'\nset ylabel 'efficiency'\nset yrange [0:1.2]\nset xtics 1\n",
           plot.substr(0, plot.size() - 2));
  plot = "plot ";
  for (const auto& [key, rows] : overhead)
    plot += s.block(rows.str()) + " using 1:2 with linespoints pt 7 title " + quoted(key) + ", ";
  const bool weak = study.at("scaling") == "weak";
  add_plot(s, plots, dir, "overhead", weak ? "Overhead O = TN - T1" : "Overhead O = TN - T1 / N",
           "set xlabel 'ranks'\nset ylabel 'overhead (s)'\nset xtics 1\n",
           plot.substr(0, plot.size() - 2));
  return draw(s, plots, dir, "scaling", note);
}

}  // namespace hlm
