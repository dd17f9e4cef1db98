#include "compile/diagnostics.h"

#include <gtest/gtest.h>

#include <vector>

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

namespace kz::compile {

TEST(Diagnostics, KeepsTheContextJustBeforeTheFirstError) {
  std::string text =
      "Error building extension 'ext': [1/3] c++ -MMD -MF main.o.d -c main.cpp -o main.o\n"
      "FAILED: main.o\n"
      "c++ -MMD -MF main.o.d -c /b/main.cpp -o main.o\n"
      "/b/main.cpp: In instantiation of 'T twice(T) [with T = int]':\n"
      "/b/main.cpp:4:15:   required from here\n"
      "/usr/include/hdr.h:2:44: error: request for member 'foo' in 'x'\n";
  std::string out = TrimDiagnostics(text);
  EXPECT_EQ(out.rfind("/b/main.cpp: In instantiation of", 0), 0u) << out;
  EXPECT_NE(out.find("main.cpp:4:15:   required from here"), std::string::npos);
  EXPECT_EQ(out.find("FAILED"), std::string::npos);
}

TEST(Diagnostics, FailuresOfTheMachineAreToldApartFromCompileErrors) {
  struct Case { std::string output, kind; };
  for (const Case& c : std::vector<Case>{
           {"/b/main.o: fatal error: error writing to /tmp/ccX.s: No space left on device", "cache"},
           {"/usr/bin/ld: final link failed: Disk quota exceeded", "cache"},
           {"c++: fatal error: Killed signal terminated program cc1plus", "memory_limit"},
           {"nvcc error   : 'cicc' died due to signal 9 (Kill signal)", "memory_limit"},
           {"collect2: fatal error: ld terminated with signal 9 [Killed]", "memory_limit"},
           {"cc1plus: out of memory allocating 65536 bytes after a total of 1 bytes", "memory_limit"},
           {"nvcc error   : 'cudafe++' died due to signal 11 (Invalid memory reference)", "crash"},
           {"Error building extension 'e': [1/2] c++ -c main.cpp\nFAILED: main.o \nc++ -MMD -c main.cpp -o main.o\n"
            "ninja: build stopped: subcommand failed.\n", "crash"},
           // ninja 1.13 with a linker killed mid-write (real output, commands shortened)
           {"Error building extension 'e': [1/3] nvcc -c cuda.cu -o cuda.cuda.o \n[2/3] c++ -c main.cpp -o main.o \n"
            "[3/3] c++ main.o cuda.cuda.o -shared -o e.so\nFAILED: [code=137] e.so \nc++ main.o cuda.cuda.o -shared -o e.so\n"
            "Killed\nninja: build stopped: subcommand failed.\n", "crash"},
           {"FAILED: main.o \nc++ -c main.cpp -o main.o\nSegmentation fault (core dumped)\n", "crash"}}) {
    auto f = ClassifyBuildFailure(c.output);
    ASSERT_TRUE(f) << c.output;
    EXPECT_EQ(f->kind, c.kind) << c.output;
    EXPECT_NE(f->reason.find("not cached"), std::string::npos);
  }
  for (const std::string& compile_error : std::vector<std::string>{
           "Error building extension 'e': [1/2] nvcc -c cuda.cu\nFAILED: cuda.cuda.o \nnvcc -c cuda.cu\n"
           "/b/cuda.cu(5): error: identifier \"y\" is undefined\nninja: build stopped: subcommand failed.\n",
           "/b/cuda.cu:2:10: fatal error: kz_missing.h: No such file or directory",
           "nvcc fatal   : Unsupported gpu architecture 'compute_10'",
           "ptxas error   : Entry function '_Z1kPf' uses too much shared data",
           // the candidate's own words, echoed by the compiler, are not the machine's
           "/b/cuda.cu(7): error: identifier \"x\" is undefined\n      x = 0; // No space left on device\n",
           "/b/cuda.cu:9:2: error: #error Killed signal terminated program cc1plus\n"})
    EXPECT_FALSE(ClassifyBuildFailure(compile_error)) << compile_error;
}

}  // namespace kz::compile
