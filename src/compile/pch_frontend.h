// Whether a build may use the slim host header (pch.h's kSlimName): a source whose torch
// includes pull in a header of torch's C++ frontend must be built against the full PCH
// (against the slim one, GCC would parse that header from text, and the frontend's inline
// functions are what the slim header leaves out). Found with `g++ -M`.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "compile/tool_runner.h"

namespace kz::compile {

// Real paths of every file `header` includes (`cxx flags -M -x c++ header`, preprocessing
// only, ~1 s); false when the compiler fails.
bool HeaderDeps(const ToolRunner& runner, const std::string& cxx, const std::vector<std::string>& flags,
                const std::string& header, std::set<std::string>* deps);

// Writes kFrontendList into a slim PCH's directory: torch's headers that <torch/extension.h>
// includes and the slim header does not. Best effort (none: no source is refused).
void WriteFrontendList(const ToolRunner& runner, const std::string& pch_dir, const std::string& cxx,
                       const std::vector<std::string>& flags);

// The `#include`d torch, ATen, c10, caffe2 and pybind11 headers of `texts`, sorted, not
// counting <torch/types.h> and <torch/extension.h> (which the slim header replaces).
std::vector<std::string> TorchIncludes(const std::vector<std::string>& texts);

// Why sources `texts` must not use the slim PCH in `slim_dir`, or "": their torch includes
// reach a header of kFrontendList. The answer is kept under <slim_dir>/includes/ per set of
// includes; a probe that fails to compile refuses nothing (it fails either way).
std::string FrontendRefusal(const ToolRunner& runner, const std::string& slim_dir, const std::string& cxx,
                            const std::vector<std::string>& flags, const std::vector<std::string>& texts);

}  // namespace kz::compile
