// Extraction: the code of a model's reply.
//
// Rule (docs/generate.md): text up to the last "</think>" is reasoning and is skipped.
// Fenced blocks are ``` lines with an info string of python, py, python3 or none (any
// other language, e.g. cpp or cuda, is not a candidate block); a block is complete when
// its closing ``` line came. The code is the last complete block that defines
// `class ModelNew` (Coder) or `class Model` (Proposer). A reply without any fence whose
// whole text defines the class is taken as it is. A reply cut by max_tokens still gives
// its code when a complete block came before the cut.
// Otherwise the sample keeps a reason (and empty code): it counts as a failure in
// pass@k, never as a dropped sample.
#pragma once
#include <optional>
#include <string>

namespace kz::generate {

enum class NoCodeReason {
  kNotUtf8,    // the reply is not valid UTF-8
  kEmpty,      // the reply is empty or only whitespace
  kTruncated,  // finish_reason "length" and no complete block with the class
  kNoCode,     // no python code block at all
  kNoClass,    // complete code blocks, but none defines the class
  kUnclosed,   // a python block that never closed (and no complete block with the class)
};

// "not_utf8", "empty_reply", "truncated", "no_code", "no_class", "unclosed_block".
const char* ReasonName(NoCodeReason r);

struct Extraction {
  std::string code;                   // "" when reason is set
  std::optional<NoCodeReason> reason;
  int blocks = 0;                     // complete python blocks seen
};

// `proposer`: look for `class Model` instead of `class ModelNew`.
Extraction ExtractCode(const std::string& reply, const std::string& finish_reason, bool proposer);

// True when `code` has a line `class <name>` followed by `(`, `:` or a space.
bool DefinesClass(const std::string& code, const std::string& name);

}  // namespace kz::generate
