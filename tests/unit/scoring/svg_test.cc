// The SVG writer: well-formed XML (balanced tags, escaped text) and points inside the plot.
#include "scoring/svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <vector>

namespace kz::scoring {
namespace {

// Minimal well-formedness check: every element closes in order, attributes are quoted,
// and no bare '&' or '<' appears in text.
bool WellFormed(const std::string& xml, std::string* why) {
  std::vector<std::string> open;
  size_t i = xml.find("<svg");
  if (i == std::string::npos) return *why = "no <svg>", false;
  static const std::regex kEntity(R"(&(amp|lt|gt|quot|apos);)");
  while (i < xml.size()) {
    if (xml[i] != '<') {
      size_t next = xml.find('<', i);
      std::string text = xml.substr(i, next - i);
      std::string stripped = std::regex_replace(text, kEntity, "");
      if (stripped.find('&') != std::string::npos) return *why = "bare & in " + text, false;
      i = next == std::string::npos ? xml.size() : next;
      continue;
    }
    size_t end = xml.find('>', i);
    if (end == std::string::npos) return *why = "unclosed tag", false;
    std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return *why = "mismatched </" + tag + ">", false;
      open.pop_back();
      continue;
    }
    if (std::count(tag.begin(), tag.end(), '"') % 2) return *why = "odd quotes in <" + tag + ">", false;
    if (tag.find('<') != std::string::npos) return *why = "< inside a tag", false;
    if (tag.back() != '/') open.push_back(tag.substr(0, tag.find_first_of(" \n")));
  }
  if (!open.empty()) return *why = "unclosed <" + open.back() + ">", false;
  return true;
}

std::vector<std::pair<double, double>> Points(const std::string& svg) {
  std::vector<std::pair<double, double>> out;
  static const std::regex kPoly(R"re(<polyline class="series"[^>]*points="([^"]*)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), kPoly), end; it != end; ++it) {
    std::istringstream in((*it)[1].str());
    double x, y;
    char comma;
    while (in >> x >> comma >> y) out.push_back({x, y});
  }
  return out;
}

TEST(Svg, WellFormedWithEscapedLabels) {
  PlotSpec spec{"fast_p <level 1> & \"friends\"", "p", "fast_p@k", 0, 2.5, 0, 1};
  std::string svg = LinePlotSvg(spec, {{"k = 1 & <5>", {{0, 0.5}, {1, 0.25}, {2.5, 0}}}});
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why << "\n" << svg;
  EXPECT_NE(svg.find("&lt;level 1&gt; &amp; &quot;friends&quot;"), std::string::npos);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
}

TEST(Svg, PointsInsideThePlotAreaAndClamped) {
  PlotSpec spec{"t", "x", "y", 0, 2.5, 0, 1};
  std::vector<Series> series = {{"a", {{0, 0}, {1.25, 0.5}, {2.5, 1}}},
                                {"b", {{-1, 2}, {9, -3}, {1, NAN}}}};  // out of range, and NaN skipped
  std::string svg = LinePlotSvg(spec, series);
  auto pts = Points(svg);
  ASSERT_EQ(pts.size(), 5u);
  PlotArea a = AreaOf(spec);
  for (auto [x, y] : pts) {
    EXPECT_GE(x, a.left - 1e-9);
    EXPECT_LE(x, a.right + 1e-9);
    EXPECT_GE(y, a.top - 1e-9);
    EXPECT_LE(y, a.bottom + 1e-9);
  }
  EXPECT_NEAR(pts[0].first, a.left, 0.01);   // (0, 0): bottom left
  EXPECT_NEAR(pts[0].second, a.bottom, 0.01);
  EXPECT_NEAR(pts[1].first, (a.left + a.right) / 2, 0.01);
  EXPECT_NEAR(pts[1].second, (a.top + a.bottom) / 2, 0.01);
  EXPECT_NEAR(pts[2].second, a.top, 0.01);   // y = 1 at the top
  std::string why;
  EXPECT_TRUE(WellFormed(svg, &why)) << why;
}

TEST(Svg, EmptySeriesStillWellFormed) {
  std::string why;
  EXPECT_TRUE(WellFormed(LinePlotSvg({}, {}), &why)) << why;
  EXPECT_TRUE(WellFormed(LinePlotSvg({}, {{"none", {}}}), &why)) << why;
}

}  // namespace
}  // namespace kz::scoring
