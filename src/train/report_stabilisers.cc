#include "train/report_stabilisers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "scoring/svg.h"

namespace kz::train {
namespace {
using nlohmann::json;

std::string Fixed(const json& v) {
  if (!v.is_number()) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v.get<double>());
  return buf;
}

const json& Field(const json& line, const char* table, const char* key) {
  static const json kNull;
  if (!line.contains(table) || !line[table].is_object() || !line[table].contains(key)) return kNull;
  return line[table][key];
}

std::string Count(const json& v) { return v.is_number() ? std::to_string(v.get<long>()) : "–"; }

}  // namespace

bool HasStabilisers(const std::vector<json>& coder, const std::vector<json>& evals) {
  for (const auto& c : coder)
    if (c.contains("multi_turn") || c.contains("retry") || c.contains("mirror_pop")) return true;
  return std::any_of(evals.begin(), evals.end(), [](const json& e) { return e.contains("pass_at_1_best_turn"); });
}

std::string StabilisersMarkdown(const std::vector<json>& coder, const std::vector<json>& evals) {
  std::ostringstream md;
  md << "## Multi-turn refinement and stabilisers\n\n"
     << "| unit | turns | pass first turn | pass any turn | repaired | feedback cut | retried | recovered | buffered | "
        "MirrorPop filtered |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : coder)
    md << "| " << c.value("unit", "") << " | "
       << Count(Field(c, "multi_turn", "turns").is_null() ? json(1) : Field(c, "multi_turn", "turns")) << " | "
       << Fixed(Field(c, "multi_turn", "pass_first_turn")) << " | " << Fixed(Field(c, "multi_turn", "pass_any_turn"))
       << " | " << Count(Field(c, "multi_turn", "repaired")) << " | " << Count(Field(c, "multi_turn", "feedback_cut"))
       << " | " << Count(Field(c, "retry", "retried_now")) << " | " << Count(Field(c, "retry", "recovered_now"))
       << " | " << Count(Field(c, "retry", "buffered")) << " | " << Fixed(Field(c, "mirror_pop", "filtered_share"))
       << " |\n";
  bool refining = false;
  for (const auto& e : evals) refining = refining || e.contains("pass_at_1_best_turn");
  if (refining) {
    md << "\n| evaluation | turns | pass@1 first turn | pass@1 best turn | fast_1@1 best turn "
          "|\n|---|---|---|---|---|\n";
    for (const auto& e : evals)
      md << "| " << e.value("unit", "") << " | " << e.value("turns", 1) << " | " << Fixed(e["pass_at_1"]) << " | "
         << Fixed(e.contains("pass_at_1_best_turn") ? e["pass_at_1_best_turn"] : e["pass_at_1"]) << " | "
         << Fixed(e.contains("fast_1_at_1_best_turn") ? e["fast_1_at_1_best_turn"] : e["fast_1_at_1"]) << " |\n";
  }
  md << "\n![stabilisers](stabilisers.svg)\n";
  return md.str();
}

std::string StabilisersSvg(const std::vector<json>& coder) {
  scoring::Series first{"pass first turn", {}}, any{"pass any turn", {}}, pop{"MirrorPop filtered share", {}},
      yield{"retry yield (cumulative)", {}};
  for (size_t i = 0; i < coder.size(); ++i) {
    double x = double(i + 1);
    const json& c = coder[i];
    auto num = [](const json& v, double fallback) { return v.is_number() ? v.get<double>() : fallback; };
    first.points.push_back({x, num(Field(c, "multi_turn", "pass_first_turn"), c.value("accuracy", NAN))});
    any.points.push_back({x, num(Field(c, "multi_turn", "pass_any_turn"), c.value("accuracy", NAN))});
    pop.points.push_back({x, num(Field(c, "mirror_pop", "filtered_share"), NAN)});
    yield.points.push_back({x, num(Field(c, "retry", "yield"), NAN)});
  }
  scoring::PlotSpec s;
  s.title = "Coder steps: refinement and stabilisers";
  s.x_label = "step";
  s.y_label = "share";
  s.x_min = 0, s.x_max = std::max(1.0, double(coder.size())), s.y_min = 0, s.y_max = 1;
  return scoring::LinePlotSvg(s, {first, any, pop, yield});
}

}  // namespace kz::train
