// Line-level rewrites of load_inline's main.cpp and cuda.cu for the faster header modes
// (build_modes.h): which headers a source includes, swapping torch's umbrella includes for
// the farm's lighter headers, and telling nvcc errors that no header can cure.
#pragma once
#include <string>
#include <vector>

namespace kz::compile {

inline constexpr const char* kLiteName = "kz_torch_lite.h";
// A lighter stand-in for <torch/types.h> in cuda.cu: the Tensor class, factory ops, the
// `torch::` names and dtype constants (a subset of the same declarations).
extern const char* const kLiteHeader;

// The names in `#include <name>` / `#include "name"` lines, in order.
std::vector<std::string> IncludedHeaders(const std::string& text);

// True when a line of `text` is `#include <torch/types.h>` or `<torch/extension.h>`.
bool HasTorchInclude(const std::string& text);

// `text` with each such line replaced by `#include "<header>"` (line numbers kept).
std::string ReplaceTorchIncludes(const std::string& text, const std::string& header);

// True when nvcc's errors about cuda.cu in `output` are all of a kind no header can cure
// (syntax, type mismatches between the candidate's own names): a split build's device part
// failing only with these fails the same way in every header mode.
bool HeaderIndependentErrors(const std::string& output);

}  // namespace kz::compile
