// Mapping compiler locations in load_inline's main.cpp / cuda.cu back to the candidate. The
// diagnostics below are real nvcc 13.0 / g++ 12 output (paths shortened).
#include "compile/source_map.h"

#include <gtest/gtest.h>

namespace kz::compile {
namespace {
// cuda_sources = [r"""\n...""" starting on line 10 of relu.py, 25 lines];
// cpp_sources = ["torch::Tensor relu_cuda(torch::Tensor x);"] on line 32; functions = ["relu_cuda"].
nlohmann::json ReluCall() {
  std::string cuda = "\n";
  for (int i = 2; i <= 25; ++i) cuda += "// line " + std::to_string(i) + (i < 25 ? "\n" : "");
  return {{"name", "relu_ext"},
          {"cpp_sources", {"torch::Tensor relu_cuda(torch::Tensor x);"}},
          {"cuda_sources", {cuda}},
          {"functions", {"relu_cuda"}},
          {"candidate_file", "relu.py"},
          {"source_lines", {{"cpp_sources", {32}}, {"cuda_sources", {10}}}}};
}

std::string Describe(const nlohmann::json& call, GeneratedFile f, int line) {
  InlineLayout layout = LayoutOf(call);
  auto loc = MapGeneratedLine(layout, f, line);
  return loc ? DescribeLocation(layout, *loc) : "none";
}
}  // namespace

TEST(SourceMap, CudaCuHasThreeImplicitIncludesThenTheSources) {
  auto call = ReluCall();
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 1), "cuda.cu line 1 (load_inline's implicit #include <torch/types.h>)");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 3), "cuda.cu line 3 (load_inline's implicit #include <cuda_runtime.h>)");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 4), "relu.py:10 (cuda_sources line 1)");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 10), "relu.py:16 (cuda_sources line 7)");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 28), "relu.py:34 (cuda_sources line 25)");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 29), "none") << "past the end of cuda.cu";
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 0), "none");
}

TEST(SourceMap, MainCppHasTheExtensionIncludeTheSourcesThenTheModule) {
  auto call = ReluCall();
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 1), "main.cpp line 1 (load_inline's implicit #include <torch/extension.h>)");
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 2), "relu.py:32 (cpp_sources line 1)");
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 3), "main.cpp line 3 (the PYBIND11_MODULE load_inline generates from `functions`)");
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 4),
            "main.cpp line 4 (the pybind11 binding load_inline generates for 'relu_cuda' from `functions`)");
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 5), "main.cpp line 5 (the PYBIND11_MODULE load_inline generates from `functions`)");
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 6), "none");
  call.erase("functions");  // functions=None: no module at all
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 3), "none");
}

TEST(SourceMap, SeveralPiecesAreJoinedByNewlinesAndNamedByIndex) {
  nlohmann::json call = {{"cuda_sources", {"a\nb", "c", "d\ne\nf"}},
                         {"source_lines", {{"cuda_sources", {7, nullptr, 40}}}},
                         {"candidate_file", "k.py"}};
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 5), "k.py:8 (cuda_sources[0] line 2)");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 6), "cuda_sources[1] line 1") << "built at run time: no file line";
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 9), "k.py:42 (cuda_sources[2] line 3)");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 10), "none");
}

TEST(SourceMap, AStringArgumentAndNoExtractionInfoStillMapToTheSourceLine) {
  nlohmann::json call = {{"cuda_sources", "x\ny\nz"}, {"cpp_sources", nlohmann::json::array()},
                         {"functions", {{"zeta", "doc"}, {"alpha", "doc"}}}};
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 6), "cuda_sources line 3");
  EXPECT_EQ(Describe(call, GeneratedFile::kCudaCu, 7), "none");
  // No cpp_sources: main.cpp is the include and the module; dict keys in the order sent.
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 3),
            "main.cpp line 3 (the pybind11 binding load_inline generates for 'alpha' from `functions`)");
  EXPECT_EQ(Describe(call, GeneratedFile::kMainCpp, 4),
            "main.cpp line 4 (the pybind11 binding load_inline generates for 'zeta' from `functions`)");
  EXPECT_EQ(Describe({{"cpp_sources", {"int f();"}}}, GeneratedFile::kCudaCu, 1), "none") << "no cuda.cu";
  EXPECT_EQ(Describe(nullptr, GeneratedFile::kMainCpp, 1), "main.cpp line 1 (load_inline's implicit #include <torch/extension.h>)");
}

TEST(SourceMap, NvccErrorIsMappedAndTheOriginalKept) {
  std::string nvcc =
      "/c/tmp/build-O2dp8J/cuda.cu(10): error: a value of type \"float *\" cannot be used to initialize an entity of type \"int *\"\n"
      "      int* out = y;\n"
      "                 ^\n"
      "\n"
      "1 error detected in the compilation of \"/c/tmp/build-O2dp8J/cuda.cu\".\n";
  std::string out = MapDiagnostics(nvcc, LayoutOf(ReluCall()));
  EXPECT_EQ(out,
            "relu.py:16 (cuda_sources line 7): error: a value of type \"float *\" cannot be used to "
            "initialize an entity of type \"int *\"\n"
            "compiler output:\n" + nvcc);
}

TEST(SourceMap, GccFormatErrorsFromThePreprocessorAndHostCompiler) {
  std::string text =
      "/c/tmp/build-x/cuda.cu:7:2: error: #error kz deliberate\n"
      "    7 | #error kz deliberate\n"
      "      |  ^~~~~\n"
      "/c/tmp/build-x/cuda.cu:9:10: fatal error: kz_missing.h: No such file or directory\n"
      "/c/tmp/build-x/main.cpp: In function 'void pybind11_init_relu_ext(pybind11::module_&)':\n"
      "/c/tmp/build-x/main.cpp:4:48: error: 'relu_cuda' was not declared in this scope\n";
  std::string out = MapDiagnostics(text, LayoutOf(ReluCall()));
  EXPECT_EQ(out.substr(0, out.find("compiler output:\n")),
            "relu.py:13 (cuda_sources line 4): error: #error kz deliberate\n"
            "relu.py:15 (cuda_sources line 6): fatal error: kz_missing.h: No such file or directory\n"
            "main.cpp line 4 (the pybind11 binding load_inline generates for 'relu_cuda' from `functions`): "
            "error: 'relu_cuda' was not declared in this scope\n");
  EXPECT_NE(out.find("compiler output:\n" + text), std::string::npos);
}

TEST(SourceMap, ErrorsInHeadersAreMappedThroughTheirContext) {
  // EDG: the instantiation's line in cuda.cu comes after the error.
  std::string edg =
      "/usr/include/ATen/hdr.h(2): error: expression must have class type but it has type \"float\"\n"
      "    return x.foo();\n"
      "           ^\n"
      "          detected during instantiation of \"T twice(T) [with T=float]\" at line 12 of /c/tmp/b/cuda.cu\n";
  std::string out = MapDiagnostics(edg, LayoutOf(ReluCall()));
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "relu.py:18 (cuda_sources line 9): error: expression must have class type but it has type "
            "\"float\" [in hdr.h:2]");
  // GCC: "required from here" and the include chain come before the error.
  std::string gcc =
      "/c/tmp/b/main.cpp: In instantiation of 'T twice(T) [with T = int]':\n"
      "/c/tmp/b/main.cpp:2:15:   required from here\n"
      "/usr/include/hdr.h:2:44: error: request for member 'foo' in 'x', which is of non-class type 'int'\n";
  out = MapDiagnostics(gcc, LayoutOf(ReluCall()));
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "relu.py:32 (cpp_sources line 1): error: request for member 'foo' in 'x', which is of "
            "non-class type 'int' [in hdr.h:2]");
  std::string included =
      "In file included from /c/tmp/b/cuda.cu:5:\n"
      "/c/tmp/b/my.h:1:9: error: expected primary-expression before ';' token\n";
  out = MapDiagnostics(included, LayoutOf(ReluCall()));
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "relu.py:11 (cuda_sources line 2): error: expected primary-expression before ';' token [in my.h:1]");
}

TEST(SourceMap, AtMostMaxErrorsAreMapped) {
  std::string text;
  for (int l = 5; l < 10; ++l) text += "/b/cuda.cu(" + std::to_string(l) + "): error: e" + std::to_string(l) + "\n";
  std::string out = MapDiagnostics(text, LayoutOf(ReluCall()), 2);
  EXPECT_NE(out.find("relu.py:11 (cuda_sources line 2): error: e5\n"), std::string::npos);
  EXPECT_NE(out.find("relu.py:12 (cuda_sources line 3): error: e6\n"), std::string::npos);
  EXPECT_EQ(out.find("relu.py:13"), std::string::npos);
}

TEST(SourceMap, TextWithoutMappableErrorsIsUnchanged) {
  auto layout = LayoutOf(ReluCall());
  for (std::string text : {"the build process exceeded its wall-time limit after 5 s\n",
                           "/usr/include/x.h(3): error: no context here\n",
                           "nvcc fatal   : Unsupported gpu architecture 'compute_10'\n",
                           "/b/cuda.cu(99): error: past the end of the file\n",
                           "/b/other.cu:3:1: error: not a file load_inline writes\n", ""})
    EXPECT_EQ(MapDiagnostics(text, layout), text);
}

}  // namespace kz::compile
