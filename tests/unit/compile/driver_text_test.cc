// The build driver's text functions: build.ninja edits, source rewrites, the load_inline
// layout, nm output (build_driver.h's components, without processes).
#include <gtest/gtest.h>

#include <algorithm>

#include "compile/inline_layout.h"
#include "compile/ninja_file.h"
#include "compile/source_rewrite.h"
#include "compile/split_symbols.h"
#include "util/fs.h"

namespace kz::compile {
namespace {
const char* kNinja =
    "ninja_required_version = 1.3\ncxx = c++\ncflags = -DTORCH_EXTENSION_NAME=x -O2\n\n"
    "rule link\n  command = $cxx $in $ldflags -o $out\n\nbuild x.so: link main.o\ndefault x.so\n";

TEST(NinjaFileTest, ReadsAndSetsTopLevelVariables) {
  auto vars = NinjaVars(kNinja);
  EXPECT_EQ(vars["cxx"], "c++");
  EXPECT_EQ(vars["cflags"], "-DTORCH_EXTENSION_NAME=x -O2");
  EXPECT_EQ(vars.count("command"), 0u);  // indented: a rule's, not top level
  std::string set = SetNinjaVar(kNinja, "cflags", "-O3 -include a.h");
  EXPECT_EQ(NinjaVars(set)["cflags"], "-O3 -include a.h");
  EXPECT_EQ(SetNinjaVar(kNinja, "nothere", "1"), kNinja);
}

TEST(NinjaFileTest, FastLinkerKeepsTheDefaultBehindIt) {
  auto fast = UseFastLinker(kNinja, "lld");
  ASSERT_TRUE(fast);
  EXPECT_NE(fast->find("-fuse-ld=lld -o $out 2>/dev/null || $cxx $in $ldflags -o $out\n"), std::string::npos);
  EXPECT_FALSE(UseFastLinker(*fast, "lld"));  // not torch's rule any more
  EXPECT_FALSE(UseFastLinker(kNinja, ""));
}

TEST(NinjaFileTest, LinkerChoicePrefersLldThenGold) {
  std::string err, a = util::MakeTempDir(::testing::TempDir(), "ld-", &err), b = a + "/b";
  util::MakeDirs(b, &err);
  auto tool = [&](const std::string& path) {
    util::WriteFileAtomic(path, "#!/bin/sh\n", &err);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  };
  EXPECT_EQ(ChooseLinker(a + ":" + b), "");
  tool(b + "/ld.gold");
  EXPECT_EQ(ChooseLinker(a + ":" + b), "gold");
  tool(a + "/ld.lld");
  EXPECT_EQ(ChooseLinker(b + ":" + a), "lld");
}

TEST(NinjaFileTest, FailedOutputsOfBothNinjaFormats) {
  EXPECT_EQ(FailedOutputs("[1/2] c++ ...\nFAILED: main.o \nerr\nFAILED: [code=1] cuda.cuda.o\n"),
            (std::set<std::string>{"main.o", "cuda.cuda.o"}));
  EXPECT_TRUE(FailedOutputs("ninja: build stopped\n").empty());
}

TEST(SourceRewriteTest, TorchIncludesSwappedLineForLine) {
  std::string cu = "#include <torch/types.h>\n#include <cuda.h>\n  # include \"torch/extension.h\"  \n\nint x;";
  std::string out = ReplaceTorchIncludes(cu, kLiteName);
  EXPECT_EQ(out, "#include \"kz_torch_lite.h\"\n#include <cuda.h>\n#include \"kz_torch_lite.h\"\n\nint x;");
  EXPECT_TRUE(HasTorchInclude(cu));
  EXPECT_FALSE(HasTorchInclude(out));
  EXPECT_EQ(IncludedHeaders(cu), (std::vector<std::string>{"torch/types.h", "cuda.h", "torch/extension.h"}));
}

TEST(SourceRewriteTest, ErrorsNoHeaderCanCure) {
  EXPECT_TRUE(HeaderIndependentErrors("/b/cuda.cu(5): error: expected a \";\"\n"));
  EXPECT_TRUE(HeaderIndependentErrors(
      "cuda.cu(9): error: a value of type \"int *\" cannot be used to initialize an entity of type \"float *\"\n"));
  EXPECT_FALSE(HeaderIndependentErrors("/b/cuda.cu(5): error: identifier \"at\" is undefined\n"));
  EXPECT_FALSE(
      HeaderIndependentErrors("/b/cuda.cu(5): error: expected a \";\"\n"
                              "/b/cuda.cu(6): error: namespace \"torch\" has no member \"Tensor\"\n"));
  EXPECT_FALSE(HeaderIndependentErrors("FAILED: cuda.cuda.o\n"));  // no nvcc error at all
}

// Hostile lines (review of session 15): a megabyte-long line must not reach std::regex, whose
// matcher recurses per repeated character (a stack overflow took the build thread down).
TEST(SourceRewriteTest, MegabyteLinesAreNotMatched) {
  std::string long_include = "#include <" + std::string(1 << 20, 'a') + ">\n#include <cuda.h>\n";
  EXPECT_EQ(IncludedHeaders(long_include), (std::vector<std::string>{"cuda.h"}));
  std::string spaced = "#include <torch/types.h>" + std::string(1 << 20, ' ') + "\n";
  EXPECT_TRUE(HasTorchInclude(spaced));  // trailing blanks are cut before matching
  EXPECT_EQ(ReplaceTorchIncludes(spaced, kLiteName), "#include \"kz_torch_lite.h\"\n");
  std::string padded = "#include <torch/types.h> //" + std::string(1 << 20, 'x') + "\n";
  EXPECT_FALSE(HasTorchInclude(padded));
  EXPECT_FALSE(HeaderIndependentErrors("/b/cuda.cu(5): error: expected a \"" + std::string(1 << 20, 'y') + "\"\n"));
}

TEST(InlineLayoutTest, SourcesAsLoadInlineWritesThem) {
  std::string why;
  auto s =
      LoadInlineSources({{"cpp_sources", "int f();"}, {"functions", {"f", "g"}}, {"cuda_sources", {"a", "b"}}}, &why);
  ASSERT_TRUE(s);
  EXPECT_EQ(
      s->main,
      "#include <torch/extension.h>\nint f();\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
      "m.def(\"f\", torch::wrap_pybind_function(f), \"f\");\nm.def(\"g\", torch::wrap_pybind_function(g), \"g\");\n}");
  EXPECT_EQ(*s->cu, "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\na\nb");
  s = LoadInlineSources({{"cpp_sources", {"x"}}, {"functions", {{"f", "doc"}}}, {"cuda_sources", ""}}, &why);
  ASSERT_TRUE(s);
  EXPECT_NE(s->main.find("m.def(\"f\", torch::wrap_pybind_function(f), \"doc\");"), std::string::npos);
  EXPECT_FALSE(s->cu);
  EXPECT_FALSE(LoadInlineSources({{"cpp_sources", 3}}, &why));
  EXPECT_FALSE(LoadInlineSources({{"cpp_sources", ""}, {"functions", 5}}, &why));
}

TEST(InlineLayoutTest, RenderSubstitutesInOnePass) {
  EXPECT_EQ(RenderNinja("-DN=@KZ_NAME@ @KZ_DIR@/main.cpp", "@KZ_DIR@", "/a b"), "-DN=@KZ_DIR@ /a$ b/main.cpp");
}

TEST(SplitSymbolsTest, NmOutputAndBaseNames) {
  auto syms = ParseNm("                 U _Z1kPf\n0000000000000000 t _Z1kPf\n0000000000000010 T main\nbad line here\n");
  EXPECT_EQ(syms["_Z1kPf"], (std::set<char>{'U', 't'}));
  EXPECT_EQ(syms["main"], (std::set<char>{'T'}));
  EXPECT_EQ(SymbolBaseName("void ns::k<16, std::pair<int, int> >(float*)"), "k");
  EXPECT_EQ(SymbolBaseName("kz_tl_add(float const*)"), "kz_tl_add");
  EXPECT_EQ(SymbolBaseName(""), "");
}
}  // namespace
}  // namespace kz::compile
