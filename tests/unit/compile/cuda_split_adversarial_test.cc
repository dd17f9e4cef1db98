// The cuda.cu split (compile/cuda_split.h) on hostile and odd inputs: unbalanced braces,
// comments and literals, raw strings, macros over several lines, templates, torch includes
// inside kernels, empty and huge sources. It must refuse or split soundly, never crash.
#include <gtest/gtest.h>

#include <string>

#include "compile/cuda_split.h"

namespace kz::compile {
namespace {
const std::string kPrefix = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n";
const std::string kKernel = "__global__ void k(float* y) { y[0] = 1.f; }\n";

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string Reason(const std::string& source) {
  CudaSplit s = SplitCudaSource(source);
  return s.ok ? "(split)" : s.reason;
}

TEST(CudaSplitAdversarialTest, NoKernelOutsideCommentsAndLiterals) {
  EXPECT_EQ(Reason(""), "no __global__ kernel");
  EXPECT_EQ(Reason("\n\n   \t"), "no __global__ kernel");
  EXPECT_EQ(Reason("// __global__ void k() {}\n/* __global__ */ const char* s = \"__global__\";"),
            "no __global__ kernel");
  EXPECT_EQ(Reason("const char* r = R\"(__global__ void k() {})\";"), "no __global__ kernel");
}

TEST(CudaSplitAdversarialTest, UnbalancedBracesRefuse) {
  EXPECT_EQ(Reason(kPrefix + kKernel + "}\n"), "unbalanced braces");
  EXPECT_EQ(Reason(kPrefix + "__global__ void k(float* y) { if (y) { y[0] = 1; }\n"),
            "source ends inside a declaration");
  EXPECT_EQ(Reason(kPrefix + kKernel + "int f()"), "source ends inside a declaration");
  EXPECT_EQ(Reason(kPrefix + "namespace a {\n" + kKernel + "}}\n"), "unbalanced braces");
}

TEST(CudaSplitAdversarialTest, BracesInCommentsAndLiteralsAreNotStructure) {
  std::string src = kPrefix + "__global__ void k(char* s) { s[0] = '{'; s[1] = \"}{\"[0]; /* } */ s[2] = '\\''; }\n" +
                    "// an open comment brace {\n" + "__device__ int g() { return 1'000; }  // digit separator\n";
  CudaSplit s = SplitCudaSource(src);
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_TRUE(Has(s.device, "s[2] = '\\''; }\n"));
  EXPECT_TRUE(Has(s.device, "__device__ int g() { return 1'000; }"));
  // An unterminated block comment runs to the end: what follows is not code.
  CudaSplit open = SplitCudaSource(kPrefix + kKernel + "/* never closed {\nint x = 1;");
  ASSERT_TRUE(open.ok) << open.reason;
  EXPECT_FALSE(Has(open.device, "never closed") || Has(open.host, "never closed"));
  // An unterminated string ends at its line.
  EXPECT_TRUE(SplitCudaSource(kPrefix + kKernel + "static const char* s = \"{;\n;").ok);
}

TEST(CudaSplitAdversarialTest, RawStringsKeepTheirBytesAndHideLaunches) {
  std::string src = kPrefix + kKernel +
                    "torch::Tensor f(torch::Tensor x) {\n"
                    "  const char* r = R\"x( } <<<1, 1>>> { \" )x\";\n"
                    "  k<<<1, 1>>>(x.data_ptr<float>());\n  return x;\n}\n";
  CudaSplit s = SplitCudaSource(src);
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_TRUE(Has(s.host, "R\"x( } <<<1, 1>>> { \" )x\""));  // untouched inside the literal
  EXPECT_TRUE(Has(s.host, "(__cudaPushCallConfiguration(1, 1)) ? (void)0 : k(x.data_ptr<float>());"));
  // u8R"(...)": a prefixed raw string is read as a plain string (as the Python split did).
  EXPECT_TRUE(SplitCudaSource(kPrefix + kKernel + "static const char* u = u8R\"(x)\";").ok);
}

TEST(CudaSplitAdversarialTest, MacrosOverSeveralLinesAreOneItem) {
  std::string src = kPrefix + "#define SQUARE(x) \\\n  do { \\\n    x = x * x; } \\\n  while (0)\n" +  // lines 4-7
                    kKernel;                                                                           // line 8
  CudaSplit s = SplitCudaSource(src);
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_TRUE(
      Has(s.device, "#line 4 \"cuda.cu\"\n#define SQUARE(x) \\\n  do { \\\n    x = x * x; } \\\n  while (0)\n"));
  EXPECT_TRUE(Has(s.host, "#line 4 \"cuda.cu\"\n#define SQUARE"));
  EXPECT_TRUE(Has(s.device, "#line 8 \"cuda.cu\"\n__global__ void k("));
  EXPECT_TRUE(Has(s.host, "#line 8 \"cuda.cu\"\nvoid k(float* y);"));
}

TEST(CudaSplitAdversarialTest, TorchIncludesAndNames) {
  // Inside a kernel: the kernel names torch, so the source cannot be split.
  EXPECT_EQ(Reason(kPrefix + "__global__ void k(float* y) {\n#include <torch/extension.h>\n}\n"),
            "kernel uses torch/ATen types");
  EXPECT_EQ(Reason(kPrefix + "__device__ float f(float v) { TORCH_CHECK(v); return v; }\n" + kKernel),
            "device code uses torch/ATen types");
  // At top level, <...> includes of torch, ATen, c10, pybind11 and caffe2 stay host-only.
  CudaSplit s =
      SplitCudaSource("#include <ATen/ATen.h>\n# include <pybind11/pybind11.h>\n#include <vector>\n" + kKernel);
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_FALSE(Has(s.device, "ATen") || Has(s.device, "pybind11"));
  EXPECT_TRUE(Has(s.device, "#include <vector>") && Has(s.host, "#include <vector>"));
  // A quoted include is blanked before the check, so it goes to both parts (kept from the
  // Python split; a device part that then fails to compile falls back to the next mode).
  EXPECT_TRUE(Has(SplitCudaSource("#include \"torch/extension.h\"\n" + kKernel).device, "torch/extension.h"));
}

TEST(CudaSplitAdversarialTest, TemplatesOfEveryKind) {
  std::string src = kPrefix + "constexpr int TILE = 32;\n" +
                    "template <typename T> __device__ T sq(T v) { return v * v; }\n"
                    "template <int N> struct Tile { float v[N]; };\n"
                    "template <typename T> T twice(T v) { return 2 * v; }\n"
                    "template <int N, int M = 2>\n__global__ void k(float y[N], int n) {}\n" +
                    "torch::Tensor f(torch::Tensor x) { float* p = x.data_ptr<float>(); "
                    "k<TILE * 2><<<1, 1>>>(p, 1); k<16, 4><<<2, 2>>>(p, 2); return x; }\n";
  CudaSplit s = SplitCudaSource(src);
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_TRUE(Has(s.device, "template <typename T> __device__ T sq") && !Has(s.host, "sq("));
  EXPECT_TRUE(Has(s.device, "struct Tile") && Has(s.host, "struct Tile"));
  EXPECT_TRUE(Has(s.device, "T twice(T v) {") && Has(s.host, "T twice(T v) {"));
  EXPECT_TRUE(Has(s.device, "void kz_tl_0(KzLaunch kz_l, float y[TILE * 2], int n) { k<TILE * 2><<<"));
  EXPECT_TRUE(Has(s.device, "void kz_tl_1(KzLaunch kz_l, float y[(16)], int n)"));
  EXPECT_TRUE(Has(s.host, "kz_tl_0(KzLaunch(1, 1), p, 1);"));
  EXPECT_FALSE(Has(s.host, "<<<"));
}

TEST(CudaSplitAdversarialTest, KernelTemplatesThatCannotBePlaced) {
  std::string k = kPrefix + "template <int N, int M> __global__ void k(float* y) {}\n";
  std::string wrap = "torch::Tensor f(torch::Tensor x) { float* p = x.data_ptr<float>(); ";
  EXPECT_EQ(Reason(k + wrap + "k<1, 2, 3><<<1, 1>>>(p); return x; }\n"),
            "kernel template k<1, 2, 3>: too many template arguments");
  EXPECT_EQ(Reason(k + wrap + "k<1><<<1, 1>>>(p); return x; }\n"), "kernel template k<1>: missing template arguments");
  EXPECT_EQ(
      Reason(kPrefix + "template <int*> __global__ void k(float* y) {}\n" + wrap + "k<1><<<1, 1>>>(p); return x; }\n"),
      "kernel template k: unnamed template parameter");
  EXPECT_EQ(
      Reason(kPrefix + "template <int N> __global__ void k(float*) {}\n" + wrap + "k<1><<<1, 1>>>(p); return x; }\n"),
      "kernel template k: unnamed or defaulted parameter 'float*'");
  // An explicit specialisation has no plain declarator (the Python split raised here).
  EXPECT_EQ(Reason(kPrefix + "template <> __global__ void spec<float>(float*) {}\n"),
            "kernel template : unrecognised parameter list");
}

TEST(CudaSplitAdversarialTest, LaunchesThatCannotBeRewritten) {
  EXPECT_EQ(Reason(kPrefix + kKernel + "torch::Tensor f(torch::Tensor x) { k<<<1, 1(x); return x; }\n"),
            "unterminated <<< >>> launch");
}

TEST(CudaSplitAdversarialTest, BlocksAndOddTopLevelItems) {
  // extern "C" blocks are not read inside (the blanked "C" does not match): refused.
  EXPECT_EQ(Reason(kPrefix + "extern \"C\" {\n" + kKernel + "}\n"), "unrecognised top-level definition");
  EXPECT_EQ(Reason(kPrefix + "namespace empty {}\n" + kKernel), "unrecognised top-level definition");
  CudaSplit s = SplitCudaSource(kPrefix +
                                "extern \"C\" __global__ void ek(int n) {}\n"
                                "inline namespace v1 { namespace a::b {\n" +
                                kKernel +
                                "} }\n"
                                "enum class E { A, B };\nusing I = int;\ntypedef float F;\n"
                                "static_assert(sizeof(int) == 4, \"int\");\nstatic int counter;\n");
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"ek", "k"}));
  EXPECT_TRUE(Has(s.host, "inline namespace v1 {\n") && Has(s.host, "namespace a::b {\n"));
  EXPECT_TRUE(Has(s.host, "static int counter;") && !Has(s.device, "counter"));
  for (const char* both : {"enum class E", "using I = int;", "typedef float F;", "static_assert("})
    EXPECT_TRUE(Has(s.device, both) && Has(s.host, both)) << both;
}

TEST(CudaSplitAdversarialTest, NonAsciiTextIsCarriedThrough) {
  std::string src = kPrefix + "// \xc3\xa9t\xc3\xa9 {\n__global__ void k(float* y) { /* \xe2\x82\xac */ y[0] = 1; }\n" +
                    "static const char* s = \"\xc3\xa9{\";\n";
  CudaSplit s = SplitCudaSource(src);
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_TRUE(Has(s.device, "/* \xe2\x82\xac */") && Has(s.device, "\"\xc3\xa9{\""));
}

TEST(CudaSplitAdversarialTest, HugeSourcesSplitInLinearTime) {
  std::string src = kPrefix, launches;
  constexpr int kKernels = 20000;  // ~1.5 MB
  for (int i = 0; i < kKernels; ++i) {
    src += "__global__ void k" + std::to_string(i) + "(float* y, int n) { if (n) y[0] = " + std::to_string(i) + "; }\n";
    launches += "  k" + std::to_string(i) + "<<<1, 1>>>(p, 1);\n";
  }
  src += "torch::Tensor f(torch::Tensor x) {\n  float* p = x.data_ptr<float>();\n" + launches + "  return x;\n}\n";
  src += "/*" + std::string(2 << 20, '{') + "*/\n";  // a 2 MB comment
  CudaSplit s = SplitCudaSource(src);
  ASSERT_TRUE(s.ok) << s.reason;
  EXPECT_EQ(s.kernels.size(), static_cast<size_t>(kKernels));
  EXPECT_EQ(s.kernels.back(), "k" + std::to_string(kKernels - 1));
  EXPECT_TRUE(Has(s.device, "#line " + std::to_string(3 + kKernels) + " \"cuda.cu\"\n__global__ void k19999("));
  EXPECT_TRUE(Has(s.host, "(__cudaPushCallConfiguration(1, 1)) ? (void)0 : k19999(p, 1);"));
  EXPECT_FALSE(Has(s.host, "<<<"));
}

}  // namespace
}  // namespace kz::compile
