// The C++ build driver end to end with g++ and ninja against stand-in torch headers (a few
// lines each): a build through the precompiled header, a compile error in torch's format,
// a compiler that hangs past the deadline, a build directory that cannot be written.
#include "compile/build_driver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "compile/build_procs.h"
#include "compile/pch.h"
#include "util/fs.h"

namespace kz::compile {
namespace {
const char* kPybind =
    "#pragma once\n#define PYBIND11_MODULE(name, m) struct kz_m { template <class F> void def(const char*, F, "
    "const char*) {} }; void kz_init_##name(kz_m& m)\n"
    "namespace torch { template <class F> F wrap_pybind_function(F f) { return f; } }\n";

class BuildDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "driver-", &err);
    std::string inc = dir_ + "/torch/include";
    for (const char* h :
         {"torch/types.h", "torch/csrc/Device.h", "torch/csrc/Dtype.h", "torch/csrc/DynamicTypes.h",
          "torch/csrc/Exceptions.h", "torch/csrc/autograd/python_variable.h", "torch/csrc/python_headers.h",
          "torch/csrc/utils/python_numbers.h", "torch/csrc/utils/python_tuples.h"}) {
      util::MakeDirs(std::filesystem::path(inc + "/" + h).parent_path(), &err);
      util::WriteFileAtomic(inc + "/" + h, "#pragma once\n", &err);
    }
    util::WriteFileAtomic(inc + "/torch/csrc/utils/pybind.h", kPybind, &err);
    util::WriteFileAtomic(inc + "/torch/all.h", "#pragma once\n", &err);  // torch's C++ frontend
    util::WriteFileAtomic(inc + "/torch/extension.h",
                          "#pragma once\n#include <torch/all.h>\n#include <torch/csrc/utils/pybind.h>\n", &err);
    tmpl_ = std::string("cxx = CXX\ncflags = -DTORCH_EXTENSION_NAME=@KZ_NAME@ -isystem ") + inc +
            " -fPIC -std=c++17\npost_cflags =\nldflags = -shared\n\n"
            "rule compile\n  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags\n"
            "  depfile = $out.d\n  deps = gcc\n\nrule link\n  command = $cxx $in $ldflags -o $out\n\n"
            "build main.o: compile @KZ_DIR@/main.cpp\n\nbuild @KZ_NAME@.so: link main.o\n\ndefault @KZ_NAME@.so\n";
  }
  DriverOutcome Build(const std::string& cpp, const std::string& cxx = "c++", const std::string& pch = "",
                      double timeout_s = 120) {
    std::string t = tmpl_;
    t.replace(t.find("CXX"), 3, cxx);
    DriverSetup setup{pch, "2.11", ToolRunner{}, nullptr};
    setup.runner.timeout_s = timeout_s;
    setup.runner.marker = marker_;
    nlohmann::json call = {{"name", "ext"}, {"cpp_sources", cpp}, {"functions", {"f"}}};
    return DriveBuild(call, dir_ + "/build", t, setup);
  }
  std::string dir_, tmpl_, marker_ = "kz-driver-test-" + std::to_string(::getpid());
};

TEST_F(BuildDriverTest, BuildsTheLibraryThroughThePrecompiledHeader) {
  DriverOutcome out = Build("int f() { return 1; }", "c++", dir_ + "/pch");
  ASSERT_TRUE(out.result.value("ok", false)) << out.result.dump();
  EXPECT_EQ(out.result["library"], util::AbsolutePath(dir_ + "/build/ext.so"));
  const auto& report = out.result["build"];
  EXPECT_EQ(report["header_mode"], "full");
  EXPECT_EQ(report["pch"], true);
  EXPECT_EQ(report["driver"], "kz");
  std::string ninja, err;
  util::ReadFile(dir_ + "/build/build.ninja", &ninja, &err);
  EXPECT_NE(ninja.find("-include kz_torch_ext.h -Winvalid-pch"), std::string::npos);
  EXPECT_NE(ninja.find("-DTORCH_EXTENSION_NAME=ext "), std::string::npos);
  EXPECT_EQ(FindLibrary(dir_ + "/build", "ext"), dir_ + "/build/ext.so");
}

TEST_F(BuildDriverTest, ASourceNeedingTheFrontendSkipsTheSlimHeader) {
  DriverOutcome out = Build("#include <torch/all.h>\nint f() { return 1; }", "c++", dir_ + "/pch");
  ASSERT_TRUE(out.result.value("ok", false)) << out.result.dump();
  std::string why = out.result["build"].value("slim_skipped", "");
  EXPECT_NE(why.find("its includes (torch/all.h) pull in torch's C++ frontend (torch/all.h)"), std::string::npos)
      << why;
}

TEST_F(BuildDriverTest, APchThatCannotBeBuiltCostsTimeNotTheBuild) {
  std::string err;
  util::WriteFileAtomic(dir_ + "/not-a-dir", "", &err);
  DriverOutcome out = Build("int f() { return 1; }", "c++", dir_ + "/not-a-dir/pch");
  ASSERT_TRUE(out.result.value("ok", false)) << out.result.dump();
  EXPECT_EQ(out.result["build"]["pch"], false);
  EXPECT_NE(out.result["build"].value("pch_error", ""), "");
}

TEST_F(BuildDriverTest, ACompileErrorReadsAsTorchsAndNamesTheFailedOutput) {
  DriverOutcome out = Build("int f() { return undefined_name; }");
  ASSERT_FALSE(out.result.value("ok", true));
  EXPECT_FALSE(out.timed_out);
  EXPECT_EQ(out.result["error"]["kind"], "compile_error");
  std::string message = out.result["error"]["message"];
  EXPECT_EQ(message.rfind("Error building extension 'ext': ", 0), 0u) << message;
  EXPECT_NE(message.find("FAILED: "), std::string::npos);
  EXPECT_NE(message.find("undefined_name"), std::string::npos);
}

TEST_F(BuildDriverTest, AHangingCompilerEndsAtTheDeadline) {
  std::string err, cc = dir_ + "/hang";
  util::WriteFileAtomic(cc, "#!/bin/sh\nexec sleep 300\n", &err);
  std::filesystem::permissions(cc, std::filesystem::perms::owner_all);
  auto t0 = std::chrono::steady_clock::now();
  DriverOutcome out = Build("int f() { return 1; }", cc, "", 2);
  EXPECT_TRUE(out.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_EQ(FindBuildProcesses().count(marker_), 0u);  // ninja ran the compiler in a group of its own
}

TEST_F(BuildDriverTest, ABuildDirectoryThatCannotBeWrittenIsAMachineFailure) {
  std::string err;
  util::WriteFileAtomic(dir_ + "/build", "a file, not a directory", &err);
  DriverOutcome out = Build("int f() { return 1; }");
  EXPECT_NE(out.machine_error.find("cannot write the build directory"), std::string::npos);
}
}  // namespace
}  // namespace kz::compile
