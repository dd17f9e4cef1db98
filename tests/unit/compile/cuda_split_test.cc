// The cuda.cu split (compile/cuda_split.h): where each top-level declaration goes, the
// launch rewrite, the #line mapping, kernel templates, the constructs that must refuse, and
// outputs byte-identical to the Python op it replaced (golden files written by it).
#include "compile/cuda_split.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compile/cuda_split_text.h"
#include "util/fs.h"

namespace kz::compile {
namespace {
const std::string kPrefix = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n";

const std::string kSource = kPrefix + R"(
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#define CHECK(x) TORCH_CHECK(x.is_cuda(), #x " must be CUDA")  // brace in a comment: {
constexpr int BLOCK = 256;
struct Pair { float a, b; };
__constant__ float scale[4];
__device__ __forceinline__ float twice(float v) { return 2.0f * v; }
namespace kzk {
__global__ void __launch_bounds__(256) fill(float* __restrict__ y, Pair p, int n) {
    const char* s = "}";  // braces inside literals are not structure
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = twice(p.a) + scale[0];
}
}  // namespace kzk
void launch_fill(float* y, int n, cudaStream_t st) {
    kzk::fill<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, st>>>(y, Pair{1.f, 2.f}, n);
}
static cudaStream_t side = nullptr;
torch::Tensor run(torch::Tensor x) {
    CHECK(x);
    kzk::fill<<<dim3(1), dim3(BLOCK)>>>(x.data_ptr<float>(), Pair{0.f, 0.f}, (int)x.numel());
    launch_fill(x.data_ptr<float>(), (int)x.numel(), c10::cuda::getCurrentCUDAStream());
    return x;
}
)";

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// {cuda.cu line: text of the item} for each `#line N "cuda.cu"` block.
std::map<int, std::string> Chunks(const std::string& text) {
  std::map<int, std::string> out;
  for (size_t at = text.find("#line "); at != std::string::npos;) {
    size_t next = text.find("#line ", at + 6), eol = text.find('\n', at);
    std::string body = text.substr(eol + 1, next == std::string::npos ? std::string::npos : next - eol - 1);
    out[std::stoi(text.substr(at + 6))] = std::string(cuda_split::Strip(body));
    at = next;
  }
  return out;
}

CudaSplit MustSplit(const std::string& source) {
  CudaSplit s = SplitCudaSource(source);
  EXPECT_TRUE(s.ok) << s.reason;
  return s;
}

TEST(CudaSplitTest, PlacesEachDeclaration) {
  CudaSplit s = MustSplit(kSource);
  EXPECT_EQ(s.kernels, std::vector<std::string>{"fill"});
  for (const char* torch : {"torch/", "c10/", "torch::"}) EXPECT_FALSE(Has(s.device, torch)) << torch;
  EXPECT_TRUE(Has(s.device, "__global__ void __launch_bounds__(256) fill"));
  EXPECT_TRUE(Has(s.device, "__device__ __forceinline__ float twice") && !Has(s.host, "twice"));
  EXPECT_TRUE(Has(s.device, "__constant__ float scale[4];") && !Has(s.host, "scale"));
  EXPECT_TRUE(Has(s.host, "static cudaStream_t side") && !Has(s.device, "cudaStream_t side"));  // host state, once
  EXPECT_TRUE(Has(s.host, "torch::Tensor run") && !Has(s.device, "run("));
  for (const char* shared : {"constexpr int BLOCK = 256;", "struct Pair { float a, b; };", "#define CHECK"})
    EXPECT_TRUE(Has(s.device, shared) && Has(s.host, shared)) << shared;
  // A plain host function is defined once (device part) and declared in the host part.
  EXPECT_TRUE(Has(s.device, "void launch_fill(float* y, int n, cudaStream_t st) {"));
  EXPECT_TRUE(Has(s.host, "void launch_fill(float* y, int n, cudaStream_t st);"));
  // The kernel becomes a host prototype inside its namespace.
  EXPECT_TRUE(Has(s.host, "namespace kzk {") && Has(s.host, "void fill(float* __restrict__ y, Pair p, int n);"));
  auto dev = Chunks(s.device), host = Chunks(s.host);
  EXPECT_EQ(dev.count(5), 0u);
  EXPECT_EQ(host[5], "#include <torch/extension.h>");
}

TEST(CudaSplitTest, LineDirectivesKeepCudaCuNumbering) {
  CudaSplit s = MustSplit(kSource);
  std::vector<std::string> lines;
  for (size_t at = 0; at <= kSource.size();) {
    size_t eol = std::min(kSource.find('\n', at), kSource.size());
    lines.push_back(kSource.substr(at, eol - at));
    at = eol + 1;
  }
  for (const std::string* part : {&s.device, &s.host}) {
    for (const auto& [line, text] : Chunks(*part)) {
      std::string first(cuda_split::Strip(text.substr(0, text.find('\n'))));
      bool skip = first.empty();
      for (const char* p : {"namespace", "}", "void fill(", "void launch_fill(float* y, int n, cudaStream_t st);"})
        skip = skip || first.rfind(p, 0) == 0;
      if (skip) continue;
      EXPECT_EQ(std::string(cuda_split::Strip(lines[line - 1])).rfind(first.substr(0, 20), 0), 0u) << line << first;
    }
  }
}

TEST(CudaSplitTest, LaunchesBecomePushConfigurationAndStubCalls) {
  std::string host = MustSplit(kSource).host;
  EXPECT_FALSE(Has(host, "<<<"));
  EXPECT_TRUE(
      Has(host, "(__cudaPushCallConfiguration(dim3(1), dim3(BLOCK))) ? (void)0 : kzk::fill(x.data_ptr<float>()"));
  EXPECT_TRUE(Has(host, "extern \"C\" unsigned __cudaPushCallConfiguration"));
}

TEST(CudaSplitTest, TemplateArgumentsOfALaunchedKernelAreKept) {
  std::string host =
      MustSplit(kPrefix +
                "__global__ void k(float* p) {}\n"
                "torch::Tensor f(torch::Tensor x, float* p) { ns::k<float, 4> <<<g, b, smem, s>>>(p); return x; }\n")
          .host;
  EXPECT_TRUE(Has(host, "{ (__cudaPushCallConfiguration(g, b, smem, s)) ? (void)0 : ns::k<float, 4> (p); return x; }"))
      << host;
}

TEST(CudaSplitTest, LiteralsAndCommentsAreBlankedButKeepLength) {
  std::string src = "a = \"x{y}\"; // }\nb = R\"d(})d\"; c = '}'; /* { */ d = 1'000; e = u8R\"(\")\";";
  std::string blank = cuda_split::Blank(src);
  EXPECT_EQ(blank.size(), src.size());
  EXPECT_FALSE(Has(blank, "{") || Has(blank, "}"));
  EXPECT_TRUE(Has(blank, "d = 1'000;"));  // a digit separator is no character literal
  EXPECT_TRUE(Has(blank, "\n"));          // newlines kept: line numbers carry over
  EXPECT_EQ(cuda_split::Blank(""), "");
}

const std::string kWrapHead = "torch::Tensor f(torch::Tensor x) { float* p = x.data_ptr<float>(); ";
std::string Wrap(const std::string& body) { return kWrapHead + body + " return x; }\n"; }

const std::string kTemplateSource =
    kPrefix +
    "#define BLOCK 256\ntemplate <int N, typename T = float>\n"
    "__global__ void __launch_bounds__(N) scale(T* __restrict__ y, const T* x, int n) {\n"
    "  int i = blockIdx.x * N + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }\n" +
    Wrap(
        "dim3 g(1); cudaStream_t s = 0; scale<BLOCK><<<g, BLOCK, 0, s>>>(p, p, 4); "
        "scale<BLOCK, float><<<1, 1>>>(p, p, 4); scale<128, double><<<1, 1>>>((double*)p, (double*)p, 2);");

TEST(CudaSplitTest, KernelTemplatesLaunchThroughExternalLaunchers) {
  CudaSplit s = MustSplit(kTemplateSource);
  EXPECT_EQ(s.kernels, std::vector<std::string>{"scale"});
  EXPECT_TRUE(Has(s.device,
                  "void kz_tl_0(KzLaunch kz_l, float* __restrict__ y, const float* x, int n) "
                  "{ scale<BLOCK><<<kz_l.g, kz_l.b, kz_l.s, kz_l.st>>>(y, x, n); }"));
  EXPECT_TRUE(Has(s.device, "void kz_tl_2(KzLaunch kz_l, double* __restrict__ y, const double* x, int n)"));
  EXPECT_TRUE(Has(s.host, "kz_tl_0(KzLaunch(g, BLOCK, 0, s), p, p, 4);"));
  EXPECT_TRUE(Has(s.host, "kz_tl_1(KzLaunch(1, 1), p, p, 4);"));
  size_t count = 0;
  for (size_t at = s.host.find("void kz_tl_"); at != std::string::npos; at = s.host.find("void kz_tl_", at + 1))
    ++count;
  EXPECT_EQ(count, 3u);
  EXPECT_FALSE(Has(s.host, "<<<"));
  EXPECT_LT(s.host.find("void kz_tl_0("), s.host.find("torch::Tensor f("));  // prototypes before use
}

struct Refusal {
  std::string source, reason;
};

TEST(CudaSplitTest, UnsplittableConstructsRefuseWithAReason) {
  std::vector<Refusal> cases = {
      {"template <typename T> __global__ void k(T* y) {}\n" + Wrap("k<<<1, 1>>>(p);"),
       "kernel template k launched with deduced arguments"},
      {"template <typename T> __global__ void k(T* y) {}\n" + Wrap("k<scalar_t><<<1, 1>>>(p);"),
       "kernel template k<scalar_t> depends on host names: scalar_t"},
      {"__global__ void k(at::Half* y) {}", "kernel uses torch/ATen types"},
      {"__global__ void k() {}\n__device__ c10::Half h(float v) { return v; }", "device code uses torch/ATen types"},
      {"__global__ void k() {}\nint counter = 0;", "mutable global variable with external linkage"},
      {"__global__ void k() {}\nstatic int once() { static int n = 0; return ++n; }",
       "once has static locals and would be duplicated"},
      {"__global__ void k() {}\nstruct S { void f(); };\nvoid S::f() {}", "out-of-class definition S::f"},
      {"static __global__ void k() {}", "kernel k is static or qualified"},
      {"void host_only() {}", "no __global__ kernel"},
      {"__global__ void k() {", "source ends inside a declaration"},
  };
  for (const auto& c : cases) {
    CudaSplit s = SplitCudaSource(kPrefix + c.source);
    EXPECT_FALSE(s.ok) << c.source;
    EXPECT_EQ(s.reason, c.reason) << c.source;
    EXPECT_TRUE(s.device.empty() && s.host.empty() && s.kernels.empty());
  }
}

TEST(CudaSplitTest, HalfHeadersOnlyForSourcesNamingTheirTypesOrIntrinsics) {
  const std::string half = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
  std::string plain = MustSplit(kPrefix + "__global__ void k(float* y) { y[0] = 1.f; }\n").device;
  EXPECT_FALSE(Has(plain, "cuda_fp16.h") || Has(plain, "cuda_bf16.h"));
  EXPECT_TRUE(Has(plain, "cuda_runtime.h"));
  for (const char* body : {"__half* y", "__nv_bfloat16* y", "float* y) { y[0] = __hmul(a, b); } void x(float* y",
                           "float* y) { y[0] = hexp (y[0]); } void x(float* y"})
    EXPECT_TRUE(Has(MustSplit(kPrefix + "__global__ void k(" + body + ") {}\n").device, half)) << body;
  EXPECT_FALSE(Has(MustSplit(kPrefix + "__global__ void k(float* hexpo) {}\n").device, half));  // no call
}

TEST(CudaSplitTest, SplitsOrSaysWhy) {  // what op `cusplit` answered
  CudaSplit s = MustSplit(
      "#include <torch/types.h>\n__global__ void k(float* x) { x[0] = 1; }\n"
      "void run(float* x) { k<<<1, 1>>>(x); }\n");
  EXPECT_EQ(s.kernels, std::vector<std::string>{"k"});
  EXPECT_TRUE(Has(s.host, "__cudaPushCallConfiguration"));
  CudaSplit none = SplitCudaSource("int x;\n");
  EXPECT_FALSE(none.ok);
  EXPECT_FALSE(none.reason.empty());
}

// Byte-identical to the Python op `cusplit` it replaced: its outputs for these inputs,
// written by it before it was removed (cuda_split_golden/).
TEST(CudaSplitTest, OutputsMatchThePythonSplitByteForByte) {
  std::string dir = std::string(KZ_SOURCE_DIR) + "/tests/unit/compile/cuda_split_golden/", err;
  for (const char* name : {"declarations", "templates", "two_streams", "softmax"}) {
    auto read = [&](const std::string& ext) {
      std::string text;
      EXPECT_TRUE(util::ReadFile(dir + name + "." + ext + ".txt", &text, &err)) << err;
      return text;
    };
    std::string source = read("cu");
    ASSERT_FALSE(source.empty()) << name << err;
    CudaSplit s = MustSplit(source);
    EXPECT_EQ(s.device, read("device")) << name;
    EXPECT_EQ(s.host, read("host")) << name;
    std::string kernels;
    for (const auto& k : s.kernels) kernels += k + "\n";
    EXPECT_EQ(kernels, read("kernels")) << name;
  }
}

}  // namespace
}  // namespace kz::compile
