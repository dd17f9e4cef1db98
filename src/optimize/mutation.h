// One iteration's mutation in `kz optimize` (docs/optimize.md, "The loop"): which kind, from
// which candidates, and the prompt that asks for it. The kind is drawn by a fixed rule from
// the iteration's own seeded draw: no elite yet -> seed (write from scratch); a failed child
// on the island not yet repaired -> fix it; else crossover with another island's best (1 in
// 4 when there is one), apply an experience-library record (1 in 4 when one matches the
// parent), or rewrite the parent.
#pragma once
#include <string>
#include <vector>

namespace kz::optimize {

enum class Mutation { kSeed, kRewrite, kFix, kCrossover, kApply };
const char* MutationName(Mutation m);  // "seed", "rewrite", "fix", "crossover", "apply"

struct MutationInputs {
  bool has_parent = false;       // an elite on the island
  bool has_failure = false;      // a failed child on the island waiting for a fix
  bool has_other = false;        // another island's best, different from the parent
  double u = 0;                  // the iteration's draw in [0, 1)
  bool has_experience = false;   // a library record matches the parent
};
// True when the rule would apply a library record if one matched: the loop asks the
// library only then.
bool WouldApply(const MutationInputs& in);
Mutation ChooseMutation(const MutationInputs& in);

struct PromptParts {
  std::string task_source, backend;           // backend: "cuda" or "triton"
  std::string parent_source, parent_facts;    // the parent (or the failed child, for a fix)
  std::string other_source;                   // the second parent of a crossover
  std::vector<std::string> failed;            // short-term memory: what failed on this lineage
  std::string experience;                     // kApply: the library record, one paragraph
};

// The template (prompts/optimize.v1.txt: {{backend}}, {{task_source}}, {{context}},
// {{instruction}}) rendered for `m`. False with *err for a template placeholder without value.
bool RenderOptimizePrompt(const std::string& tmpl, Mutation m, const PromptParts& p, std::string* out,
                          std::string* err);

}  // namespace kz::optimize
