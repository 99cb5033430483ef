// Figures drawn by gnuplot (Debian package gnuplot-nox) as SVG and PNG: the plumbing every
// figure shares (quoting text from the workflow, datablocks, the two terminals, running
// gnuplot) and a line plot for loss curves.
#pragma once
#include <sstream>
#include <string>
#include <vector>

namespace hlm {

struct Plot {
  std::string name;  // file stem, e.g. loss, efficiency, confusion
  std::string title;
  std::string svg, png;  // absolute paths
};

// A line plot of one series (the loss curve of a training stage) as SVG and PNG. Without
// gnuplot on PATH, or if it fails, returns nothing and says why in `*note`.
std::vector<Plot> render_line_plot(const std::string& name, const std::string& title,
                                   const std::string& x_label, const std::string& y_label,
                                   const std::vector<double>& y, const std::string& dir,
                                   std::string* note);

namespace plots {

// A gnuplot script being built: datablocks first, then the plot commands.
struct Script {
  std::ostringstream data, plots;
  int blocks = 0;
  // Adds a datablock of these rows; returns its name.
  std::string block(const std::string& rows) {
    const std::string name = "$d" + std::to_string(blocks++);
    data << name << " << EOD\n" << rows << "EOD\n";
    return name;
  }
};

// Text safe in a gnuplot command (single-quoted: no shell escapes, no newlines).
std::string quoted(const std::string& text);
// Text safe as a string column of a datablock row.
std::string data_string(const std::string& text);
// Adds a figure drawn to DIR/NAME.svg and DIR/NAME.png with these settings and plot command.
void add_plot(Script& s, std::vector<Plot>& plots, const std::string& dir, const std::string& name,
              const std::string& title, const std::string& settings, const std::string& plot);
// Writes DIR/STEM.gp and runs gnuplot on it; returns `plots` when it drew them, else nothing
// and the reason in `*note`.
std::vector<Plot> draw(Script& s, std::vector<Plot> plots, const std::string& dir,
                       const std::string& stem, std::string* note);

}  // namespace plots
}  // namespace hlm
