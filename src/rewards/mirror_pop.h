// MirrorPop (issue 22, docs/rewards.md "Multi-turn"): a sequence sampled by one policy (the
// rollout's, possibly stale or quantised) and trained under another carries a biased gradient
// when the two disagree; such sequences are filtered from the loss. Per sequence, from the
// per-token log-probabilities of the sampling policy (q) and the training policy (p):
//   sequence ratio   rho = exp(mean_t (log p_t - log q_t))   (the geometric mean per token)
//   kept when        1/c <= rho <= c   and no token has exp(log p_t - log q_t) > token_veto
//                    or < 1/token_veto, and every log-probability is finite.
// A NaN or infinite log-probability drops the sequence and is counted apart. Pure functions.
#pragma once
#include <string>
#include <vector>

namespace kz::rewards {

struct MirrorPopOptions {
  double seq_ratio_bound = 2.0;  // c > 1
  double token_veto = 20.0;      // > 1
};

// "" when usable, else why not.
std::string Validate(const MirrorPopOptions& o);

enum class PopReason { kKept, kSequenceRatio, kTokenVeto, kNan, kLengthMismatch };
const char* PopReasonName(PopReason r);  // "kept", "sequence_ratio", "token_veto", "nan", "length_mismatch"

struct PopDecision {
  PopReason reason = PopReason::kKept;
  double log_ratio = 0;  // mean per-token log ratio (0 when not computable)
  bool kept() const { return reason == PopReason::kKept; }
};

PopDecision MirrorPop(const std::vector<double>& train_logprobs, const std::vector<double>& sample_logprobs,
                      const MirrorPopOptions& o);

struct PopSummary {
  size_t sequences = 0, kept = 0, sequence_ratio = 0, token_veto = 0, nan = 0, length_mismatch = 0;
  double filtered_share() const { return sequences ? 1.0 - double(kept) / double(sequences) : 0.0; }
};
void Count(const PopDecision& d, PopSummary* s);

}  // namespace kz::rewards
