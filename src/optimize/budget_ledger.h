// The budget of a `kz optimize` run (docs/optimize.md): tokens, LLM requests, GPU-seconds and
// compile-seconds. Every call reserves its worst case before it starts (a request: its
// max_tokens; a verification: its wall limit), and settles with what it actually used when
// it ends. A reservation is refused when spent + reserved + it would pass any limit, so
// nothing in flight can overrun the budget: the run stops cleanly with what it has.
// A call that used more than it reserved (a contract broken by the caller) is recorded as
// spent anyway and counted in overruns. Thread-safe. Persisted as JSON (kz.budget/1) so a
// resumed run keeps its spending; reservations in flight at a kill are not persisted (they
// were never spent: the resumed run redoes that call).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "util/thread_annotations.h"

namespace kz::optimize {

enum class Resource : size_t { kTokens, kRequests, kGpuSeconds, kCompileSeconds };
inline constexpr size_t kResources = 4;
const char* ResourceName(Resource r);  // "tokens", "requests", "gpu_s", "compile_s"

struct Amounts {
  std::array<double, kResources> v{};
  double& operator[](Resource r) { return v[static_cast<size_t>(r)]; }
  double operator[](Resource r) const { return v[static_cast<size_t>(r)]; }
};

class BudgetLedger {
 public:
  using Reservation = uint64_t;

  // `limits`: every entry > 0 (a budget of zero leaves nothing to do: refused). Empty *err
  // on success.
  static std::optional<BudgetLedger> Create(const Amounts& limits, std::string* err);

  // Reserves `worst` (every entry >= 0); nullopt with *why naming the resource that would
  // pass its limit (or a negative amount).
  std::optional<Reservation> Reserve(const Amounts& worst, std::string* why);
  // The call ended: `actual` (>= 0) is spent, the rest of its reservation returns. False for
  // an unknown reservation or a negative amount (nothing changes).
  bool Settle(Reservation id, const Amounts& actual, std::string* err);
  // The call was never made: its whole reservation returns.
  bool Cancel(Reservation id);

  Amounts limits() const { return limits_; }
  Amounts spent() const;
  Amounts reserved() const;  // in flight
  Amounts remaining() const;  // limits - spent - reserved
  uint64_t overruns() const;  // settlements that used more than they reserved
  // True when `next` would not fit: the run is at its budget.
  bool Exhausted(const Amounts& next) const;

  nlohmann::json ToJson() const;  // {"format": "kz.budget/1", "limits", "spent", "overruns"}
  // A persisted ledger; its limits must equal `limits` (another budget means another run).
  static std::optional<BudgetLedger> FromJson(const nlohmann::json& j, const Amounts& limits, std::string* err);

  BudgetLedger(BudgetLedger&& o) noexcept;

 private:
  explicit BudgetLedger(const Amounts& limits) : limits_(limits) {}
  std::optional<std::string> WouldPass(const Amounts& add) const REQUIRES(mu_);
  Amounts limits_;
  mutable util::Mutex mu_;
  Amounts spent_ GUARDED_BY(mu_);
  std::map<Reservation, Amounts> in_flight_ GUARDED_BY(mu_);
  Reservation next_ GUARDED_BY(mu_) = 1;
  uint64_t overruns_ GUARDED_BY(mu_) = 0;
};

}  // namespace kz::optimize
