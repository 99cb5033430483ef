// Figures drawn by gnuplot as SVG and PNG (see gnuplot.h). One self-contained script per
// render (data in datablocks) stays beside the images, so a figure can be restyled and
// redrawn with `gnuplot NAME.gp`.
#include "plots/gnuplot.h"

#include <filesystem>
#include <sstream>

#include "util/atomic_file.h"
#include "util/subprocess.h"

namespace hlm {
namespace plots {

// Text from the workflow (run folder, stage ids, matrix values) reaches the script, so it is
// never left where gnuplot would act on it. In a command, gnuplot runs `backquoted` text
// inside double quotes as a shell command (checked with gnuplot 5.4: a title "`touch f`"
// created f), but not inside single quotes, where only '' needs escaping.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c == '\n' || c == '\r' ? ' ' : c;  // a newline would end the command
  }
  return out + "'";
}

// A string column of a datablock row: data lines are not substituted, but only double quotes
// group words there; a newline would end the row (or the block, before an "EOD").
std::string data_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out + "\"";
}

void add_plot(Script& s, std::vector<Plot>& plots, const std::string& dir, const std::string& name,
              const std::string& title, const std::string& settings, const std::string& plot) {
  Plot p{name, title, dir + "/" + name + ".svg", dir + "/" + name + ".png"};
  for (const auto& [terminal, path] :
       {std::pair{std::string("svg size 900,540 dynamic background rgb 'white'"), p.svg},
        std::pair{std::string("pngcairo size 900,540"), p.png}}) {
    s.plots << "reset\nset terminal " << terminal << "\nset termoption noenhanced\n"
            << "set output " << quoted(path) << "\nset title " << quoted(title)
            << "\nset grid\nset key outside right top\n"
            << settings << plot << "\nunset output\n";
  }
  plots.push_back(p);
}

std::vector<Plot> draw(Script& s, std::vector<Plot> plots, const std::string& dir,
                       const std::string& stem, std::string* note) {
  const std::string script = dir + "/" + stem + ".gp";
  write_file_atomic(script, s.data.str() + s.plots.str());
  const CommandOutput run = run_program({"gnuplot", script});
  if (run.status == 0) return plots;
  if (note)
    *note = run.status == 127 ? "no plots: gnuplot is not installed (Debian package gnuplot-nox)"
                              : "no plots: gnuplot failed on " + script + ": " + run.output;
  return {};
}

}  // namespace plots

std::vector<Plot> render_line_plot(const std::string& name, const std::string& title,
                                   const std::string& x_label, const std::string& y_label,
                                   const std::vector<double>& y, const std::string& dir,
                                   std::string* note) {
  std::filesystem::create_directories(dir);
  plots::Script s;
  std::vector<Plot> figures;
  std::ostringstream rows;
  for (size_t i = 0; i < y.size(); ++i) rows << i + 1 << " " << y[i] << "\n";
  plots::add_plot(s, figures, dir, name, title,
                  "set xlabel " + plots::quoted(x_label) + "\nset ylabel " +
                      plots::quoted(y_label) + "\nunset key\n",
                  "plot " + s.block(rows.str()) + " using 1:2 with lines lw 2");
  return plots::draw(s, figures, dir, name, note);
}

}  // namespace hlm
