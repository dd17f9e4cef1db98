#include "rewards/mirror_pop.h"

#include <cmath>

namespace kz::rewards {

std::string Validate(const MirrorPopOptions& o) {
  if (!(o.seq_ratio_bound > 1) || !std::isfinite(o.seq_ratio_bound)) return "seq_ratio_bound must be > 1 and finite";
  if (!(o.token_veto > 1) || !std::isfinite(o.token_veto)) return "token_veto must be > 1 and finite";
  return "";
}

const char* PopReasonName(PopReason r) {
  switch (r) {
    case PopReason::kKept: return "kept";
    case PopReason::kSequenceRatio: return "sequence_ratio";
    case PopReason::kTokenVeto: return "token_veto";
    case PopReason::kNan: return "nan";
    case PopReason::kLengthMismatch: return "length_mismatch";
  }
  return "?";
}

PopDecision MirrorPop(const std::vector<double>& p, const std::vector<double>& q, const MirrorPopOptions& o) {
  PopDecision d;
  if (p.size() != q.size() || p.empty()) {
    d.reason = PopReason::kLengthMismatch;
    return d;
  }
  const double veto = std::log(o.token_veto);
  double sum = 0;
  bool vetoed = false;
  for (size_t t = 0; t < p.size(); ++t) {
    double delta = p[t] - q[t];
    if (!std::isfinite(p[t]) || !std::isfinite(q[t]) || !std::isfinite(delta)) {
      d.reason = PopReason::kNan;
      return d;
    }
    vetoed |= std::fabs(delta) > veto;
    sum += delta;
  }
  d.log_ratio = sum / double(p.size());
  if (std::fabs(d.log_ratio) > std::log(o.seq_ratio_bound)) d.reason = PopReason::kSequenceRatio;
  else if (vetoed) d.reason = PopReason::kTokenVeto;
  return d;
}

void Count(const PopDecision& d, PopSummary* s) {
  ++s->sequences;
  switch (d.reason) {
    case PopReason::kKept: ++s->kept; break;
    case PopReason::kSequenceRatio: ++s->sequence_ratio; break;
    case PopReason::kTokenVeto: ++s->token_veto; break;
    case PopReason::kNan: ++s->nan; break;
    case PopReason::kLengthMismatch: ++s->length_mismatch; break;
  }
}

}  // namespace kz::rewards
