#include "train/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "scoring/svg.h"
#include "train/eval_outcomes.h"
#include "train/report_stabilisers.h"
#include "util/fs.h"

namespace kz::train {
namespace {
using nlohmann::json;


std::string Fixed(const json& v, int digits = 3) {
  if (!v.is_number()) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v.get<double>());
  return buf;
}

json Compare(const json& base, const json& eval, const TrainReportOptions& o) {
  json c = ComparePaired(EvalOutcomes(base), EvalOutcomes(eval), o.resamples, o.level, o.seed);
  c["against"] = base["unit"];
  return c;
}

std::string Interval(const json& side) {
  return Fixed(side["delta"]) + " [" + Fixed(side["lo"]) + ", " + Fixed(side["hi"]) + "]" +
         (side["excludes_zero"].get<bool>() ? " *" : "");
}

scoring::PlotSpec Spec(const std::string& title, const std::string& x, const std::string& y, double x_max, double y_min,
                     double y_max) {
  scoring::PlotSpec s;
  s.title = title, s.x_label = x, s.y_label = y;
  s.x_min = 0, s.x_max = std::max(1.0, x_max), s.y_min = y_min, s.y_max = y_max;
  return s;
}

// The Proposer phase's table (the paper's Figure 3 quantities per Proposer step).
std::string ProposerMarkdown(const std::vector<json>& proposer) {
  std::ostringstream md;
  md << "## Proposer steps (Frontier Reward)\n\n"
     << "| unit | proposals | valid | validity | Coder accuracy on valid | frontier reward mean | zero-variance sets | "
        "trained samples | loss |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& p : proposer)
    md << "| " << p["unit"].get<std::string>() << " | " << p.value("proposals", 0) << " | " << p.value("valid", 0) << " | "
       << Fixed(p["validity_rate"]) << " | " << Fixed(p["coder_accuracy"]) << " | " << Fixed(p["frontier_reward_mean"])
       << " | " << p.value("groups_zero_variance", 0) << " | " << p.value("trained_samples", 0) << " | "
       << (p.contains("loss") ? Fixed(p["loss"], 4) : (p.value("frozen", false) ? "frozen" : "no step")) << " |\n";
  md << "\n![Proposer steps](proposer.svg)\n\n";
  return md.str();
}

// Validity, the Coder's accuracy on the valid modules and the mean Frontier Reward per
// Proposer step (the reward can be negative: invalid modules' penalty).
std::string ProposerSvg(const std::vector<json>& proposer) {
  scoring::Series valid{"validity rate", {}}, acc{"Coder accuracy", {}}, reward{"frontier reward", {}};
  double lo = 0;
  for (size_t i = 0; i < proposer.size(); ++i) {
    valid.points.push_back({double(i + 1), proposer[i].value("validity_rate", NAN)});
    acc.points.push_back({double(i + 1), proposer[i].value("coder_accuracy", NAN)});
    reward.points.push_back({double(i + 1), proposer[i].value("frontier_reward_mean", NAN)});
    lo = std::min(lo, proposer[i].value("frontier_reward_mean", 0.0));
  }
  return scoring::LinePlotSvg(Spec("Proposer: frontier-driven generation", "Proposer step", "share / reward",
                                 double(proposer.size()), lo, 1),
                            {valid, acc, reward});
}

std::string Markdown(const std::string& run, const json& sft, const std::vector<json>& coder, const std::vector<json>& evals,
                     const TrainReportOptions& o) {
  std::ostringstream md;
  md << "# kz train report: " << run << "\n\n";
  if (!sft.is_null())
    md << "SFT: " << sft.value("records", 0) << " records, " << sft.value("steps", 0) << " steps, loss "
       << Fixed(sft["loss_first"]) << " → " << Fixed(sft["loss_last"]) << "\n\n";
  md << "## Held-out evaluation\n\n";
  if (evals.empty()) md << "No evaluation yet.\n\n";
  else {
    int pct = int(std::lround(o.level * 100));
    md << "| unit | round | tasks | pass@1 | fast_1@1 | Δ pass@1 [" << pct << "% CI] | Δ fast_1@1 [" << pct << "% CI] |\n"
       << "|---|---|---|---|---|---|---|\n";
    for (const auto& e : evals) {
      md << "| " << e["unit"].get<std::string>() << " | " << e.value("round", 0) << " | " << e.value("tasks", 0) << " | "
         << Fixed(e["pass_at_1"]) << " | " << Fixed(e["fast_1_at_1"]) << " | ";
      if (e.contains("compare"))
        md << Interval(e["compare"]["pass_at_1"]) << " | " << Interval(e["compare"]["fast_1_at_1"]) << " |\n";
      else
        md << "(baseline) | (baseline) |\n";
    }
    md << "\nΔ: against the first evaluation (" << evals.front()["unit"].get<std::string>()
       << "), paired over the tasks both evaluated, " << o.resamples << " bootstrap resamples over tasks (seed " << o.seed
       << "); * the interval excludes zero.\n\n![held-out evaluation](eval.svg)\n\n";
  }
  md << "## Coder steps (CA-GRPO)\n\n";
  if (coder.empty()) md << "No Coder step yet.\n\n";
  else {
    md << "| unit | tasks | samples | accuracy | reward mean | gate open | zero-variance | trained samples | loss |\n"
       << "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& c : coder)
      md << "| " << c["unit"].get<std::string>() << " | " << c.value("tasks", 0) << " | " << c.value("samples", 0) << " | "
         << Fixed(c["accuracy"]) << " | " << Fixed(c["reward_mean"]) << " | " << c.value("groups_gate_open", 0) << " | "
         << c.value("groups_zero_variance", 0) << " | " << c.value("trained_samples", 0) << " | "
         << (c.contains("loss") ? Fixed(c["loss"], 4) : "no step") << " |\n";
    md << "\n![Coder steps](coder.svg)\n";
  }
  return md.str();
}

}  // namespace

bool WriteTrainReport(const TrainReportOptions& o, json* summary, std::string* err) {
  std::string text;
  if (!util::ReadFile(o.run_dir + "/metrics.jsonl", &text, err))
    return *err = o.run_dir + " has no metrics.jsonl (not a kz train run directory, or no unit has finished): " + *err, false;
  json sft;
  std::vector<json> coder, evals, proposer;
  for (auto& u : MetricsUnits(text)) {
    std::string kind = u.value("kind", "");
    if (kind == "sft") sft = u;
    else if (kind == "proposer") proposer.push_back(u);
    else if (kind == "coder") coder.push_back(u);
    else if (kind == "eval") evals.push_back(u);
  }
  for (size_t i = 1; i < evals.size(); ++i) evals[i]["compare"] = Compare(evals.front(), evals[i], o);

  scoring::Series acc{"group accuracy", {}}, reward{"reward mean", {}}, pass{"pass@1", {}}, fast{"fast_1@1", {}};
  double reward_max = 1;
  for (size_t i = 0; i < coder.size(); ++i) {
    acc.points.push_back({double(i + 1), coder[i].value("accuracy", NAN)});
    reward.points.push_back({double(i + 1), coder[i].value("reward_mean", NAN)});
    reward_max = std::max(reward_max, coder[i].value("reward_mean", 0.0));
  }
  double round_max = 1;
  for (const auto& e : evals) {
    double r = e.value("round", 0);
    round_max = std::max(round_max, r);
    pass.points.push_back({r, e.value("pass_at_1", NAN)});
    fast.points.push_back({r, e.value("fast_1_at_1", NAN)});
  }
  std::string out = o.out_dir.empty() ? o.run_dir + "/report" : o.out_dir;
  std::string md = Markdown(o.run_dir, sft, coder, evals, o) + (proposer.empty() ? "" : "\n" + ProposerMarkdown(proposer));
  if (HasStabilisers(coder, evals)) {
    md += "\n" + StabilisersMarkdown(coder, evals);
    if (!(util::MakeDirs(out, err) && util::WriteFileAtomic(out + "/stabilisers.svg", StabilisersSvg(coder), err)))
      return false;
  }
  *summary = {{"format", "kz.train_report/1"}, {"run", o.run_dir}, {"sft", sft}, {"coder", coder}, {"eval", evals},
              {"proposer", proposer}};
  if (!proposer.empty() && !(util::MakeDirs(out, err) && util::WriteFileAtomic(out + "/proposer.svg", ProposerSvg(proposer), err)))
    return false;
  std::string coder_svg = scoring::LinePlotSvg(
      Spec("Coder: CA-GRPO steps", "step", "accuracy / reward", double(coder.size()), 0, reward_max), {acc, reward});
  std::string eval_svg =
      scoring::LinePlotSvg(Spec("Held-out evaluation (round 0: before RL)", "round", "share of tasks", round_max, 0, 1), {pass, fast});
  return util::MakeDirs(out, err) && util::WriteFileAtomic(out + "/report.md", md, err) &&
         util::WriteFileAtomic(out + "/report.json", summary->dump(1) + "\n", err) &&
         util::WriteFileAtomic(out + "/coder.svg", coder_svg, err) && util::WriteFileAtomic(out + "/eval.svg", eval_svg, err);
}

}  // namespace kz::train
