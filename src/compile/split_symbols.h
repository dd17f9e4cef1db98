// The check that a split build (cuda.cu cut into a device and a host part, docs/compile-
// farm.md) left no kernel stub undefined, read from the objects with nm: a failure makes
// the build fall back to the next header mode, instead of failing at the GPU's import.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compile/tool_runner.h"

namespace kz::compile {

// {symbol: its nm type letters} from `nm` output.
std::map<std::string, std::set<char>> ParseNm(const std::string& text);

// The unqualified name of a demangled function: `void ns::k<16>(float*)` -> `k`.
std::string SymbolBaseName(const std::string& demangled);

// "" when main.o's undefined symbols are all defined globally by cuda.cuda.o or are none of
// the split's: else why not ("split build left a symbol undefined: <symbol>"). Broken: a
// symbol cuda.cuda.o defines only locally (nvcc's internal template stubs), or one naming a
// kernel in `kernels` or a kz_tl_* launcher that cuda.cuda.o does not define globally.
std::string CheckSplitSymbols(const ToolRunner& runner, const std::string& build_dir,
                              const std::vector<std::string>& kernels);

}  // namespace kz::compile
