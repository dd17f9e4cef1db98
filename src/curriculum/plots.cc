#include "curriculum/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "scoring/svg.h"

namespace kz::curriculum {
using scoring::XmlEscape;

namespace {
std::string F(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// White (0) to dark blue (1).
std::string Blue(double t) {
  t = std::clamp(t, 0.0, 1.0);
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(255 - 247 * t), int(255 - 207 * t), int(255 - 148 * t));
  return buf;
}

std::string Text(double x, double y, const std::string& s, const std::string& extra = "", int size = 10) {
  return "<text x=\"" + F(x) + "\" y=\"" + F(y) + "\" font-size=\"" + std::to_string(size) +
         "\" font-family=\"sans-serif\"" + extra + ">" + XmlEscape(s) + "</text>\n";
}
}  // namespace

std::string HeatmapSvg(const Stats& s, const Catalog& catalog, size_t top) {
  std::vector<size_t> order(s.n());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.count[a] > s.count[b]; });
  while (!order.empty() && s.count[order.back()] == 0) order.pop_back();
  order.resize(std::min(order.size(), top));
  const double cell = 14, left = 150, top_px = 150;
  const double size = cell * static_cast<double>(order.size());
  uint32_t most = 1;
  for (size_t a : order)
    for (size_t b : order) most = std::max(most, s.Pair(a, b));
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + F(left + size + 20) + "\" height=\"" +
                    F(top_px + size + 20) + "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(10, 16, "API co-occurrence: modules using both (top " + std::to_string(order.size()) + " of " +
                          std::to_string(s.modules) + " modules)", "", 12);
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& id = catalog.api(order[i]).id;
    double mid = static_cast<double>(i) * cell + cell * 0.75;
    svg += Text(left - 4, top_px + mid, id, " text-anchor=\"end\"");
    svg += Text(left + mid - cell / 2 + 3, top_px - 4, id,
                " transform=\"rotate(-60 " + F(left + mid - cell / 2 + 3) + " " + F(top_px - 4) + ")\"");
    for (size_t j = 0; j < order.size(); ++j) {
      uint32_t c = s.Pair(order[i], order[j]);
      double t = std::log1p(c) / std::log1p(most);
      svg += "<rect class=\"cell\" data-count=\"" + std::to_string(c) + "\" x=\"" + F(left + j * cell) + "\" y=\"" +
             F(top_px + i * cell) + "\" width=\"" + F(cell) + "\" height=\"" + F(cell) + "\" fill=\"" + Blue(t) +
             "\"><title>" + XmlEscape(id + " + " + catalog.api(order[j]).id) + ": " + std::to_string(c) +
             "</title></rect>\n";
    }
  }
  return svg + "</svg>\n";
}

size_t CoverageBucket(uint32_t count) {
  size_t b = 0;
  while (count) ++b, count >>= 1;
  return b;
}

std::string CoverageHistogramSvg(const Stats& s, const Catalog& catalog) {
  std::vector<size_t> bars;
  size_t used = 0;
  for (size_t a = 0; a < s.n(); ++a) {
    size_t b = CoverageBucket(s.count[a]);
    if (bars.size() <= b) bars.resize(b + 1, 0);
    ++bars[b];
    used += s.count[a] > 0;
  }
  const double w = 560, h = 300, left = 56, top = 40, bw = w / std::max<size_t>(1, bars.size());
  size_t most = std::max<size_t>(1, *std::max_element(bars.begin(), bars.end()));
  char title[160];
  std::snprintf(title, sizeof title, "Catalog coverage: %zu of %zu APIs used by %zu modules (%.1f %%)", used,
                catalog.size(), s.modules, 100.0 * used / std::max<size_t>(1, catalog.size()));
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + F(left + w + 20) + "\" height=\"" +
                    F(top + h + 50) + "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(10, 18, title, "", 12);
  for (size_t b = 0; b < bars.size(); ++b) {
    double bh = h * static_cast<double>(bars[b]) / static_cast<double>(most), x = left + b * bw;
    std::string label = b == 0 ? "0" : b == 1 ? "1" : std::to_string(1u << (b - 1)) + "-" + std::to_string((1u << b) - 1);
    svg += "<rect class=\"bar\" data-apis=\"" + std::to_string(bars[b]) + "\" x=\"" + F(x + 2) + "\" y=\"" +
           F(top + h - bh) + "\" width=\"" + F(bw - 4) + "\" height=\"" + F(bh) + "\" fill=\"#1f77b4\"/>\n";
    svg += Text(x + bw / 2, top + h + 14, label, " text-anchor=\"middle\"");
    svg += Text(x + bw / 2, top + h - bh - 3, std::to_string(bars[b]), " text-anchor=\"middle\"");
  }
  svg += Text(left + w / 2, top + h + 34, "modules that use the API", " text-anchor=\"middle\"");
  svg += Text(14, top + h / 2, "catalog APIs", " transform=\"rotate(-90 14 " + F(top + h / 2) + ")\"");
  return svg + "</svg>\n";
}

}  // namespace kz::curriculum
