#include "compile/host_header.h"

#include <cmath>

#include "compile/ninja_file.h"
#include "compile/pch_frontend.h"
#include "util/fs.h"

namespace kz::compile {
namespace {
std::string Tail(const std::string& s, size_t n) { return s.size() > n ? s.substr(s.size() - n) : s; }
}  // namespace

HostHeader::HostHeader(std::string build_dir, PchStore* store, nlohmann::json* report)
    : ninja_(std::move(build_dir) + "/build.ninja"), store_(store), report_(report) {
  std::string text, err;
  if (util::ReadFile(ninja_, &text, &err)) {
    auto vars = NinjaVars(text);
    if (vars.count("cxx")) cxx_ = vars["cxx"];
    has_cflags_ = vars.count("cflags") > 0;
    if (has_cflags_) cflags_ = vars["cflags"];
  }
  (*report_)["pch_seconds"] = 0.0;
}

std::string HostHeader::PchFlagsFor(const std::string& header) {
  auto it = flags_.find(header);
  if (it != flags_.end()) return it->second;
  std::string& flags = flags_[header];
  if (!store_ || !has_cflags_) return flags;
  PchOutcome pch = store_->Ensure(cxx_, cflags_, header);
  double total = (*report_)["pch_seconds"].get<double>() + pch.seconds;
  (*report_)["pch_seconds"] = std::round(total * 1000) / 1000;
  if (pch.dir.empty()) {
    (*report_)["pch_error"] = Tail(pch.error, 500);
    return flags;
  }
  dirs_[header] = pch.dir;
  flags = "-I" + pch.dir + " -include " + header + " -Winvalid-pch";
  return flags;
}

std::string HostHeader::SlimRefusal(const std::vector<std::string>& texts) {
  if (!store_ || !has_cflags_) return "";
  if (PchFlagsFor(kSlimName).empty())
    return std::string("no precompiled ") + kSlimName + ": " + Tail(report_->value("pch_error", ""), 200);
  return FrontendRefusal(store_->runner(), dirs_[kSlimName], cxx_, PchFlags(cflags_), texts);
}

bool HostHeader::Use(const std::string& header) {
  if (!has_cflags_) return false;
  std::string flags = PchFlagsFor(header);
  std::string cflags = flags.empty() ? cflags_ : cflags_ + " " + flags;
  (*report_)["pch"] = !flags.empty();
  std::string text, err;
  if (!util::ReadFile(ninja_, &text, &err) || NinjaVars(text)["cflags"] == cflags) return false;
  util::WriteFileAtomic(ninja_, SetNinjaVar(text, "cflags", cflags), &err);
  return true;
}

}  // namespace kz::compile
