// A small SVG line-plot writer (no dependencies), for the bench report's figures.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace kz::scoring {

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite points are skipped
};

struct PlotSpec {
  std::string title, x_label, y_label;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;  // data range; values outside are clamped
  int width = 640, height = 420;
};

// Plot-area rectangle in SVG pixels: every series point lies within it.
struct PlotArea {
  double left, top, right, bottom;
};
PlotArea AreaOf(const PlotSpec& spec);

// Escapes &, <, >, " and ' for XML text and attributes.
std::string XmlEscape(const std::string& s);

// A standalone SVG document: axes with ticks and grid, one polyline (with markers) per
// series, and a legend. Each polyline carries class="series" and its points attribute.
std::string LinePlotSvg(const PlotSpec& spec, const std::vector<Series>& series);

}  // namespace kz::scoring
