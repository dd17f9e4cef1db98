#include "scoring/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace kz::scoring {

PlotArea AreaOf(const PlotSpec& s) {
  return {64.0, 44.0, s.width - 130.0, s.height - 52.0};
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {
const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string Tick(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::round(v * 1000) / 1000);
  return buf;
}

struct Mapper {
  PlotSpec s;
  PlotArea a;
  double X(double x) const {
    double span = s.x_max > s.x_min ? s.x_max - s.x_min : 1;
    return a.left + (std::clamp(x, s.x_min, s.x_max) - s.x_min) / span * (a.right - a.left);
  }
  double Y(double y) const {
    double span = s.y_max > s.y_min ? s.y_max - s.y_min : 1;
    return a.bottom - (std::clamp(y, s.y_min, s.y_max) - s.y_min) / span * (a.bottom - a.top);
  }
};

void Axes(std::ostringstream& o, const Mapper& m) {
  const PlotArea& a = m.a;
  const int kTicks = 5;
  for (int i = 0; i <= kTicks; ++i) {
    double xv = m.s.x_min + (m.s.x_max - m.s.x_min) * i / kTicks;
    double yv = m.s.y_min + (m.s.y_max - m.s.y_min) * i / kTicks;
    double x = m.X(xv), y = m.Y(yv);
    o << "<line x1=\"" << Num(x) << "\" y1=\"" << Num(a.top) << "\" x2=\"" << Num(x) << "\" y2=\""
      << Num(a.bottom) << "\" stroke=\"#e0e0e0\"/>\n"
      << "<line x1=\"" << Num(a.left) << "\" y1=\"" << Num(y) << "\" x2=\"" << Num(a.right)
      << "\" y2=\"" << Num(y) << "\" stroke=\"#e0e0e0\"/>\n"
      << "<text x=\"" << Num(x) << "\" y=\"" << Num(a.bottom + 16) << "\" text-anchor=\"middle\">"
      << Tick(xv) << "</text>\n"
      << "<text x=\"" << Num(a.left - 6) << "\" y=\"" << Num(y + 4) << "\" text-anchor=\"end\">"
      << Tick(yv) << "</text>\n";
  }
  o << "<rect x=\"" << Num(a.left) << "\" y=\"" << Num(a.top) << "\" width=\"" << Num(a.right - a.left)
    << "\" height=\"" << Num(a.bottom - a.top) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  o << "<text x=\"" << Num((a.left + a.right) / 2) << "\" y=\"" << Num(a.bottom + 38)
    << "\" text-anchor=\"middle\">" << XmlEscape(m.s.x_label) << "</text>\n"
    << "<text transform=\"translate(16," << Num((a.top + a.bottom) / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">" << XmlEscape(m.s.y_label) << "</text>\n"
    << "<text x=\"" << Num((a.left + a.right) / 2) << "\" y=\"26\" text-anchor=\"middle\" "
    << "font-weight=\"bold\">" << XmlEscape(m.s.title) << "</text>\n";
}

void Line(std::ostringstream& o, const Mapper& m, const Series& s, size_t i) {
  const char* color = kColors[i % (sizeof kColors / sizeof kColors[0])];
  std::string pts;
  for (const auto& [x, y] : s.points)
    if (std::isfinite(x) && std::isfinite(y)) pts += (pts.empty() ? "" : " ") + Num(m.X(x)) + "," + Num(m.Y(y));
  o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\""
    << pts << "\"/>\n";
  double ly = m.a.top + 12 + 20.0 * i;
  o << "<line x1=\"" << Num(m.a.right + 12) << "\" y1=\"" << Num(ly) << "\" x2=\"" << Num(m.a.right + 36)
    << "\" y2=\"" << Num(ly) << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n"
    << "<text x=\"" << Num(m.a.right + 42) << "\" y=\"" << Num(ly + 4) << "\">" << XmlEscape(s.label)
    << "</text>\n";
}
}  // namespace

std::string LinePlotSvg(const PlotSpec& spec, const std::vector<Series>& series) {
  Mapper m{spec, AreaOf(spec)};
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << spec.width << "\" height=\"" << spec.height
    << "\" viewBox=\"0 0 " << spec.width << " " << spec.height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  Axes(o, m);
  for (size_t i = 0; i < series.size(); ++i) Line(o, m, series[i], i);
  o << "</svg>\n";
  return o.str();
}

}  // namespace kz::scoring
