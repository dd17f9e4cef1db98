#include "optimize/budget_ledger.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kz::optimize {
using nlohmann::json;

namespace {
constexpr const char* kFormat = "kz.budget/1";

bool NonNegative(const Amounts& a) {
  for (double x : a.v)
    if (!(x >= 0) || !std::isfinite(x)) return false;
  return true;
}

json ToObject(const Amounts& a) {
  json j = json::object();
  for (size_t i = 0; i < kResources; ++i) j[ResourceName(static_cast<Resource>(i))] = a.v[i];
  return j;
}

bool FromObject(const json& j, Amounts* out) {
  if (!j.is_object()) return false;
  for (size_t i = 0; i < kResources; ++i) {
    auto it = j.find(ResourceName(static_cast<Resource>(i)));
    if (it == j.end() || !it->is_number()) return false;
    out->v[i] = it->get<double>();
  }
  return NonNegative(*out);
}
}  // namespace

const char* ResourceName(Resource r) {
  switch (r) {
    case Resource::kTokens: return "tokens";
    case Resource::kRequests: return "requests";
    case Resource::kGpuSeconds: return "gpu_s";
    case Resource::kCompileSeconds: return "compile_s";
  }
  return "?";
}

std::optional<BudgetLedger> BudgetLedger::Create(const Amounts& limits, std::string* err) {
  for (size_t i = 0; i < kResources; ++i)
    if (!(limits.v[i] > 0) || !std::isfinite(limits.v[i])) {
      *err = std::string("the budget of ") + ResourceName(static_cast<Resource>(i)) +
             " must be a positive number (a budget of zero leaves nothing to do)";
      return std::nullopt;
    }
  err->clear();
  return BudgetLedger(limits);
}

BudgetLedger::BudgetLedger(BudgetLedger&& o) noexcept : limits_(o.limits_) {
  util::MutexLock lock(o.mu_);
  spent_ = o.spent_;
  in_flight_ = std::move(o.in_flight_);
  next_ = o.next_;
  overruns_ = o.overruns_;
}

std::optional<std::string> BudgetLedger::WouldPass(const Amounts& add) const {
  Amounts held = spent_;
  for (const auto& [id, a] : in_flight_)
    for (size_t i = 0; i < kResources; ++i) held.v[i] += a.v[i];
  for (size_t i = 0; i < kResources; ++i)  // a resource the call does not use never refuses it
    if (add.v[i] > 0 && held.v[i] + add.v[i] > limits_.v[i] + 1e-9) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s: %.6g spent or in flight + %.6g > the budget %.6g",
                    ResourceName(static_cast<Resource>(i)), held.v[i], add.v[i], limits_.v[i]);
      return std::string(buf);
    }
  return std::nullopt;
}

std::optional<BudgetLedger::Reservation> BudgetLedger::Reserve(const Amounts& worst, std::string* why) {
  if (!NonNegative(worst)) return *why = "a reservation must be finite and >= 0", std::nullopt;
  util::MutexLock lock(mu_);
  if (auto pass = WouldPass(worst)) return *why = *pass, std::nullopt;
  Reservation id = next_++;
  in_flight_[id] = worst;
  return id;
}

bool BudgetLedger::Settle(Reservation id, const Amounts& actual, std::string* err) {
  if (!NonNegative(actual)) return *err = "spent amounts must be finite and >= 0", false;
  util::MutexLock lock(mu_);
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return *err = "unknown reservation " + std::to_string(id), false;
  bool over = false;
  for (size_t i = 0; i < kResources; ++i) {
    spent_.v[i] += actual.v[i];
    over = over || actual.v[i] > it->second.v[i] + 1e-9;
  }
  overruns_ += over;
  in_flight_.erase(it);
  return true;
}

bool BudgetLedger::Cancel(Reservation id) {
  util::MutexLock lock(mu_);
  return in_flight_.erase(id) > 0;
}

Amounts BudgetLedger::spent() const {
  util::MutexLock lock(mu_);
  return spent_;
}

Amounts BudgetLedger::reserved() const {
  util::MutexLock lock(mu_);
  Amounts r;
  for (const auto& [id, a] : in_flight_)
    for (size_t i = 0; i < kResources; ++i) r.v[i] += a.v[i];
  return r;
}

Amounts BudgetLedger::remaining() const {
  Amounts s = spent(), r = reserved(), out;
  for (size_t i = 0; i < kResources; ++i) out.v[i] = std::max(0.0, limits_.v[i] - s.v[i] - r.v[i]);
  return out;
}

uint64_t BudgetLedger::overruns() const {
  util::MutexLock lock(mu_);
  return overruns_;
}

bool BudgetLedger::Exhausted(const Amounts& next) const {
  util::MutexLock lock(mu_);
  return WouldPass(next).has_value();
}

json BudgetLedger::ToJson() const {
  util::MutexLock lock(mu_);
  return {{"format", kFormat}, {"limits", ToObject(limits_)}, {"spent", ToObject(spent_)}, {"overruns", overruns_}};
}

std::optional<BudgetLedger> BudgetLedger::FromJson(const json& j, const Amounts& limits, std::string* err) {
  Amounts stored, spent;
  if (!j.is_object() || j.value("format", "") != kFormat || !FromObject(j.value("limits", json()), &stored) ||
      !FromObject(j.value("spent", json()), &spent) || !j.contains("overruns") || !j["overruns"].is_number_unsigned())
    return *err = "not a kz.budget/1 ledger (corrupted run directory?)", std::nullopt;
  if (stored.v != limits.v) return *err = "the run was started with another budget: " + ToObject(stored).dump(), std::nullopt;
  auto ledger = Create(limits, err);
  if (!ledger) return std::nullopt;
  {
    util::MutexLock lock(ledger->mu_);  // not shared yet, but the contract is checked, not assumed
    ledger->spent_ = spent;
    ledger->overruns_ = j["overruns"].get<uint64_t>();
  }
  return ledger;
}

}  // namespace kz::optimize
