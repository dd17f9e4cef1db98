// Maps compiler locations in the files `load_inline` writes (main.cpp, cuda.cu) back to the
// candidate: which source string, which line of it and, when extraction found that string
// as a literal in the candidate file, which line of the candidate file.
//
// The layout is torch 2.11's (torch/utils/cpp_extension.py, load_inline with
// no_implicit_headers=False, which is all an extracted call can ask for):
//   main.cpp = "\n".join(["#include <torch/extension.h>", *cpp_sources, *module])
//              module = ["PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {", one m.def line per
//                        function, "}"] when `functions` is not None, else []
//   cuda.cu  = "\n".join(["#include <torch/types.h>", "#include <cuda.h>",
//                         "#include <cuda_runtime.h>", *cuda_sources])   (if any cuda_sources)
// Only that numbering is relied on: a build step that rewrites these files keeps it (with
// #line directives where it must).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::compile {

enum class GeneratedFile { kMainCpp, kCudaCu };

// One element of cpp_sources or cuda_sources.
struct SourcePiece {
  int lines = 1;           // lines it occupies: its newlines + 1
  int candidate_line = 0;  // line of the candidate file holding its first line; 0 = unknown
};

struct InlineLayout {
  std::string candidate_file;           // display name, e.g. "relu.py"; "" = unknown
  std::vector<SourcePiece> cpp, cuda;
  bool has_module = false;              // `functions` was given (even empty)
  std::vector<std::string> functions;   // in the order of the generated m.def lines
};

// The layout of an extracted call: its "cpp_sources", "cuda_sources", "functions", and the
// extraction's "source_lines" ({"cpp_sources": [line | null, ...], "cuda_sources": [...]})
// and "candidate_file". Missing or malformed fields count as absent.
InlineLayout LayoutOf(const nlohmann::json& call);

struct SourceLocation {
  enum class Kind {
    kSource,           // a line of cpp_sources[index] or cuda_sources[index]
    kImplicitInclude,  // a header line load_inline prepends
    kBinding,          // the generated m.def line of `name`
    kModule,           // the generated PYBIND11_MODULE's first or last line
  };
  Kind kind = Kind::kSource;
  GeneratedFile file = GeneratedFile::kCudaCu;
  int generated_line = 0;   // the line in main.cpp / cuda.cu
  std::string field;        // "cpp_sources" or "cuda_sources" (kSource)
  size_t index = 0;         // element of the field (kSource)
  size_t pieces = 0;        // elements in that field, to say "[index]" only when several
  int line = 0;             // line within the element, from 1 (kSource)
  int candidate_line = 0;   // 0 when the element was not a literal of the candidate file
  std::string name;         // the included header (kImplicitInclude) or function (kBinding)
};

// Where line `line` of a generated file comes from; nullopt if the file has no such line.
std::optional<SourceLocation> MapGeneratedLine(const InlineLayout& layout, GeneratedFile file, int line);

// "relu.py:27 (cuda_sources line 14)", "cuda_sources line 14" (no literal),
// "cuda_sources[1] line 3" (several elements), "main.cpp line 5 (the pybind11 binding
// load_inline generates for 'relu')", "cuda.cu line 1 (load_inline's implicit #include <torch/types.h>)".
std::string DescribeLocation(const InlineLayout& layout, const SourceLocation& loc);

// The diagnostics with, first, one line per error (at most `max_errors`) whose location,
// or whose nearest context (an include chain, "required from here", EDG's "at line N of"),
// lies in main.cpp or cuda.cu, mapped back: "relu.py:27 (cuda_sources line 14): error: ...";
// then "compiler output:" and `diagnostics` unchanged. `diagnostics` itself when no error
// maps. Recognises GCC ("path:L:C: error: m") and EDG/nvcc ("path(L): error: m") lines.
std::string MapDiagnostics(const std::string& diagnostics, const InlineLayout& layout, int max_errors = 3);

}  // namespace kz::compile
