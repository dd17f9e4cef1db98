#include "compile/diagnostics.h"

#include <gtest/gtest.h>

namespace kz::compile {

TEST(Diagnostics, KeepsTheFirstErrorsAndDropsNinjaNoise) {
  std::string text =
      "Error building extension 'ext': [1/3] /usr/local/cuda/bin/nvcc -MMD ...\n"
      "FAILED: cuda.cuda.o\n"
      "/tmp/b/cuda.cu(5): error: identifier \"y\" is undefined\n"
      "      y[i] = 0;\n"
      "/tmp/b/cuda.cu(6): error: expected a \";\"\n"
      "/tmp/b/cuda.cu(7): error: third\n"
      "/tmp/b/cuda.cu(8): error: fourth\n"
      "ninja: build stopped: subcommand failed.\n";
  std::string out = TrimDiagnostics(text, 2);
  EXPECT_NE(out.find("identifier \"y\" is undefined"), std::string::npos);
  EXPECT_NE(out.find("y[i] = 0;"), std::string::npos);
  EXPECT_NE(out.find("expected a"), std::string::npos);
  EXPECT_EQ(out.find("third"), std::string::npos);
  EXPECT_EQ(out.find("ninja"), std::string::npos);
  EXPECT_EQ(out.find("FAILED"), std::string::npos);
}

TEST(Diagnostics, BoundedSize) {
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "x.cu(1): error: " + std::string(100, 'e') + "\n";
  EXPECT_LT(TrimDiagnostics(text, 1000, 4096).size(), 4200u);
}

TEST(Diagnostics, NoErrorLineKeepsTheHead) {
  EXPECT_EQ(TrimDiagnostics("killed\n"), "killed\n");
}

}  // namespace kz::compile
