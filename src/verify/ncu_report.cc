#include "verify/ncu_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace kz::verify {
using json = nlohmann::json;

namespace {

const char* const kDuration = "gpu__time_duration.sum";
const char* const kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kAchieved = "sm__warps_active.avg.pct_of_peak_sustained_active";
const char* const kTheoretical = "sm__maximum_warps_per_active_cycle_pct";
const char* const kL1 = "l1tex__t_sector_hit_rate.pct";
const char* const kL2 = "lts__t_sector_hit_rate.pct";
const char* const kRegs = "launch__registers_per_thread";

// One CSV record: fields split at commas outside double quotes; "" inside quotes is a quote.
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// A number as ncu prints it ("1,234.5" with thousands separators); false for "n/a", "",
// garbage, or a value that is not finite.
bool ParseNumber(const std::string& s, double* out) {
  std::string digits;
  for (char c : s)
    if (c != ',' && c != ' ') digits += c;
  if (digits.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (end == digits.c_str() || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::string FirstLine(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (prefix.empty() || line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

}  // namespace

std::string KernelShortName(const std::string& name) {
  std::string s = name.substr(0, name.find('('));
  s = s.substr(0, s.find('<'));
  if (size_t sp = s.rfind(' '); sp != std::string::npos) s = s.substr(sp + 1);
  if (size_t q = s.rfind("::"); q != std::string::npos) s = s.substr(q + 2);
  return s.empty() ? name : s;
}

namespace {

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", v);
  return buf;
}

std::string Duration(double ns) {
  char buf[32];
  if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  return buf;
}

// Adds one launch row to `kernels` (grouped by name, the longest launch kept).
void AddLaunch(const std::vector<std::string>& header, const std::vector<std::string>& row,
               std::vector<KernelCounters>* kernels) {
  KernelCounters k;
  for (size_t i = 0; i < header.size() && i < row.size(); ++i) {
    double v = 0;
    if (header[i] == "Kernel Name")
      k.name = row[i];
    else if (header[i].find("__") != std::string::npos && ParseNumber(row[i], &v))
      k.metrics[header[i]] = v;
  }
  if (k.name.empty()) return;
  for (auto& known : *kernels) {
    if (known.name != k.name) continue;
    ++known.launches;
    auto dur = [](const KernelCounters& c) { return c.metrics.count(kDuration) ? c.metrics.at(kDuration) : 0.0; };
    if (dur(k) > dur(known)) known.metrics = k.metrics;
    return;
  }
  k.launches = 1;
  kernels->push_back(std::move(k));
}

}  // namespace

const std::vector<std::string>& NcuMetrics() {
  static const std::vector<std::string> kMetrics = {kDuration,
                                                    kDram,
                                                    kSm,
                                                    kAchieved,
                                                    kTheoretical,
                                                    kL1,
                                                    kL2,
                                                    kRegs,
                                                    "launch__occupancy_limit_registers",
                                                    "launch__occupancy_limit_shared_mem",
                                                    "launch__occupancy_limit_warps",
                                                    "launch__occupancy_limit_blocks"};
  return kMetrics;
}

std::string NcuFailureReason(const std::string& text) {
  if (text.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return "ncu: no permission for GPU performance counters (ERR_NVGPUCTRPERM)";
  if (text.find("No kernels were profiled") != std::string::npos) return "ncu: no kernels profiled";
  std::string line = FirstLine(text, "==ERROR==");
  if (line.empty()) line = FirstLine(text, "");
  if (line.empty()) line = "no output";
  if (line.size() > 200) line = line.substr(0, 200);
  return "ncu: failed (" + line + ")";
}

NcuParse ParseNcuOutput(const std::string& log_text, const std::string& stderr_text) {
  NcuParse out;
  std::istringstream in(log_text);
  std::string line;
  std::vector<std::string> header;
  bool units_pending = false;
  while (std::getline(in, line)) {
    if (line.rfind("==", 0) == 0 || line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<std::string> fields = SplitCsv(line);
    if (fields.size() > 1 && fields[0] == "ID") {  // a header (a second process prints its own)
      header = std::move(fields);
      units_pending = true;
    } else if (!header.empty() && units_pending && fields.size() == header.size() && fields[0].empty()) {
      units_pending = false;  // the units row
    } else if (!header.empty() && fields.size() == header.size()) {
      units_pending = false;
      AddLaunch(header, fields, &out.kernels);
    }
  }
  if (!out.kernels.empty()) {
    out.outcome = NcuOutcome::kCounters;
    return out;
  }
  std::string all = log_text + "\n" + stderr_text;
  out.reason = NcuFailureReason(all);
  out.outcome = all.find("ERR_NVGPUCTRPERM") != std::string::npos ? NcuOutcome::kNoPermission
                : out.reason == "ncu: no kernels profiled"        ? NcuOutcome::kNoKernels
                                                                  : NcuOutcome::kFailed;
  if (out.outcome == NcuOutcome::kFailed && !header.empty()) out.reason = "ncu: failed (no kernel row in its CSV)";
  return out;
}

std::vector<std::string> NcuArgs(const std::string& ncu, const std::vector<std::string>& kernel_names, int launch_count,
                                 const std::string& log_path) {
  std::string metrics;
  for (const auto& m : NcuMetrics()) metrics += (metrics.empty() ? "" : ",") + m;
  std::vector<std::string> argv = {ncu,
                                   "--target-processes",
                                   "all",
                                   "--csv",
                                   "--page",
                                   "raw",
                                   "--print-units",
                                   "base",
                                   "--metrics",
                                   metrics,
                                   "--launch-count",
                                   std::to_string(std::max(1, launch_count)),
                                   "--log-file",
                                   log_path};
  if (!kernel_names.empty()) {
    std::string alt;
    for (const auto& n : kernel_names) alt += (alt.empty() ? "" : "|") + n;
    argv.insert(argv.end(), {"--kernel-name", "regex:^(" + alt + ")$"});
  }
  return argv;
}

std::string OccupancyLimiter(const KernelCounters& k) {
  static const std::pair<const char*, const char*> kLimits[] = {{"launch__occupancy_limit_registers", "registers"},
                                                                {"launch__occupancy_limit_shared_mem", "shared memory"},
                                                                {"launch__occupancy_limit_warps", "warps"},
                                                                {"launch__occupancy_limit_blocks", "blocks"}};
  std::string best;
  double least = 0;
  for (const auto& [metric, name] : kLimits) {
    auto it = k.metrics.find(metric);
    if (it == k.metrics.end()) return "";
    if (best.empty() || it->second < least) best = name, least = it->second;
  }
  return best;
}

std::string CountersLine(const KernelCounters& k) {
  auto has = [&](const char* m) { return k.metrics.count(m) > 0; };
  std::string s = "kernel " + KernelShortName(k.name) + ":";
  std::vector<std::string> parts;
  if (has(kDuration)) parts.push_back(Duration(k.metrics.at(kDuration)));
  if (has(kDram)) parts.push_back("DRAM " + Pct(k.metrics.at(kDram)) + " of peak");
  if (has(kSm)) parts.push_back("SM " + Pct(k.metrics.at(kSm)));
  if (has(kAchieved)) {
    std::string occ = "occupancy " + Pct(k.metrics.at(kAchieved));
    if (has(kTheoretical)) occ += " of " + Pct(k.metrics.at(kTheoretical)) + " theoretical";
    std::string limiter = OccupancyLimiter(k);
    if (!limiter.empty()) occ += " (limited by " + limiter;
    if (!limiter.empty() && has(kRegs)) occ += ": " + std::to_string(int(k.metrics.at(kRegs))) + " registers/thread";
    if (!limiter.empty()) occ += ")";
    parts.push_back(occ);
  }
  if (has(kL1)) parts.push_back("L1 hit " + Pct(k.metrics.at(kL1)));
  if (has(kL2)) parts.push_back("L2 hit " + Pct(k.metrics.at(kL2)));
  if (parts.empty()) return s + " no counters";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : " ") + parts[i];
  if (k.launches > 1) s += " (" + std::to_string(k.launches) + " launches, the longest shown)";
  return s;
}

json CountersToJson(const KernelCounters& k) {
  return {{"name", k.name}, {"launches", k.launches}, {"metrics", k.metrics}};
}

KernelCounters CountersFromJson(const json& j) {
  KernelCounters k;
  if (!j.is_object()) return k;
  if (j.contains("name") && j["name"].is_string()) k.name = j["name"];
  if (j.contains("launches") && j["launches"].is_number_integer()) k.launches = j["launches"];
  if (j.contains("metrics") && j["metrics"].is_object())
    for (const auto& [m, v] : j["metrics"].items())
      if (v.is_number()) k.metrics[m] = v.get<double>();
  return k;
}

std::string ProfileFeedback(const json& profile) {
  if (!profile.is_object()) return "";
  std::string out;
  if (profile.value("available", false) && profile.contains("kernels") && profile["kernels"].is_array())
    for (const auto& k : profile["kernels"]) out += (out.empty() ? "" : "\n") + CountersLine(CountersFromJson(k));
  if (!out.empty()) return out;
  std::string reason =
      profile.contains("reason") && profile["reason"].is_string() ? profile["reason"].get<std::string>() : "";
  return reason.empty() ? "ncu: no counters" : reason;
}

}  // namespace kz::verify
