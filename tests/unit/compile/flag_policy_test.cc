#include "compile/flag_policy.h"

#include <gtest/gtest.h>

namespace kz::compile {
namespace {
using nlohmann::json;

TEST(FlagPolicy, OrdinaryKernelFlagsPass) {
  json call = {{"extra_cflags", {"-O3", "-std=c++17", "-DNDEBUG", "-fno-strict-aliasing", "-march=native"}},
               {"extra_cuda_cflags", {"-O3", "--use_fast_math", "-lineinfo", "-Xptxas=-v", "--expt-relaxed-constexpr",
                                      "-gencode=arch=compute_90,code=sm_90", "-maxrregcount=64"}},
               {"extra_ldflags", {"-lcuda", "-L/usr/local/cuda/lib64"}}};
  EXPECT_EQ(RefusedBuildFlag(call), "");
  EXPECT_EQ(RefusedBuildFlag({{"extra_cflags", "-O2"}}), "");  // a string, as load_inline allows
  EXPECT_EQ(RefusedBuildFlag(json::array()), "");
}

TEST(FlagPolicy, FlagsThatRunProgramsOrWriteElsewhereAreRefused) {
  for (const char* field : {"extra_cflags", "extra_cuda_cflags", "extra_ldflags"})
    for (const char* flag : {"-wrapper", "-wrapper=/bin/sh,-c,touch /x", "-Xcompiler=-wrapper,/bin/true",
                             "-fplugin=/tmp/p.so", "-specs=/tmp/s", "-B/tmp/bin", "-ccbin=/tmp/cc",
                             "--compiler-bindir=/tmp", "-fuse-ld=/tmp/ld", "-Wl,-plugin,/tmp/p.so", "@/tmp/flags",
                             "--options-file=/tmp/f", "-o", "-o/tmp/x", "-odir=/tmp", "-MF/tmp/d", "-save-temps",
                             "--keep", "--keep-dir=/tmp", "-fdump-tree-all", "-fprofile-generate=/tmp", " -wrapper"}) {
      std::string why = RefusedBuildFlag({{field, {"-O3", flag}}});
      EXPECT_NE(why, "") << field << " " << flag;
      EXPECT_NE(why.find(field), std::string::npos) << why;
      EXPECT_NE(why.find("not allowed"), std::string::npos) << why;
    }
}

TEST(FlagPolicy, APassThroughSplitOverTwoFlagsIsSeen) {
  // nvcc -Xcompiler takes the next list element: each element is checked on its own.
  EXPECT_NE(RefusedBuildFlag({{"extra_cuda_cflags", {"-Xcompiler", "-wrapper,/bin/true"}}}), "");
  EXPECT_NE(RefusedBuildFlag({{"extra_ldflags", {"-Xlinker", "-plugin"}}}), "");
}

}  // namespace
}  // namespace kz::compile
