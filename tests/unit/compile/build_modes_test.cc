// The header modes and their fallbacks (build_modes.h) with a stand-in ninja and split, and
// the facts cache (build_facts.h) with a stand-in op: what is tried in which order, which
// files each attempt sees, and a facts file torn mid-write.
#include "compile/build_modes.h"

#include <gtest/gtest.h>

#include <deque>

#include "compile/build_facts.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::compile {
namespace {
const char* kNinja = "cxx = c++\ncflags = -O2\n";
const char* kCu = "#include <torch/types.h>\n__global__ void k(float* x) {}\n";

class BuildModesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "modes-", &err);
    util::WriteFileAtomic(dir_ + "/build.ninja", kNinja, &err);
    util::WriteFileAtomic(dir_ + "/main.cpp", "#include <torch/extension.h>\nint main_part;\n", &err);
    util::WriteFileAtomic(dir_ + "/cuda.cu", kCu, &err);
  }
  std::string Read(const std::string& name) {
    std::string text, err;
    util::ReadFile(dir_ + "/" + name, &text, &err);
    return text;
  }
  // Runs the modes; ninja answers from `outcomes` in turn (then succeeds) and records what
  // main.cpp and cuda.cu held at each attempt.
  NinjaOutcome Run(std::deque<NinjaOutcome> outcomes, bool splittable = true) {
    HostHeader host(dir_, nullptr, &report_);
    ModeHooks hooks;
    hooks.run_ninja = [&] {
      seen_.push_back({Read("main.cpp"), Read("cuda.cu")});
      if (outcomes.empty()) return NinjaOutcome{true, ""};
      NinjaOutcome o = outcomes.front();
      outcomes.pop_front();
      return o;
    };
    hooks.split = [&](const std::string&) {
      CudaSplit s;
      s.ok = splittable, s.device = "DEVICE\n", s.host = "HOST\n", s.kernels = {"k"}, s.reason = "no kernel";
      return s;
    };
    hooks.check_split = [](const CudaSplit&) { return std::string(); };
    return RunModes(dir_, host, hooks, &report_);
  }
  std::string dir_;
  nlohmann::json report_ = nlohmann::json::object();
  std::vector<std::pair<std::string, std::string>> seen_;
};

NinjaOutcome Fail(const std::string& failed, const std::string& error = "error: x") {
  return {false, "Error building extension 'e': [1/2] c++ -c x\nFAILED: " + failed + "\n" + error + "\n"};
}

TEST_F(BuildModesTest, FastestModeFirstWithTheSlimHost) {
  EXPECT_TRUE(Run({}).ok);
  EXPECT_EQ(report_["header_mode"], "split");
  EXPECT_EQ(report_["host_header"], "slim");
  EXPECT_EQ(report_["split_kernels"], 1);
  EXPECT_EQ(seen_[0].second, "DEVICE\n");
  EXPECT_EQ(seen_[0].first, "HOST\n#line 1 \"main.cpp\"\n#include \"kz_torch_host.h\"\nint main_part;\n");
  EXPECT_TRUE(util::PathExists(dir_ + "/kz_torch_host.h"));  // no PCH: the header itself
}

TEST_F(BuildModesTest, SlimHostFailureRetriesTheSameModeWithTorchsHeader) {
  EXPECT_TRUE(Run({Fail("main.o")}).ok);
  EXPECT_EQ(report_["fallbacks"], nlohmann::json({"split+slim"}));
  EXPECT_EQ(report_["header_mode"], "split");
  EXPECT_EQ(report_["host_header"], "torch");
  EXPECT_EQ(seen_[1].first, "HOST\n#line 1 \"main.cpp\"\n#include <torch/extension.h>\nint main_part;\n");
  EXPECT_FALSE(util::PathExists(dir_ + "/kz_torch_host.h"));
}

TEST_F(BuildModesTest, DeviceFailureMovesOnToLiteThenFull) {
  EXPECT_TRUE(Run({Fail("cuda.cuda.o"), Fail("cuda.cuda.o")}).ok);
  EXPECT_EQ(report_["fallbacks"], nlohmann::json({"split+slim", "lite+slim"}));
  EXPECT_EQ(report_["header_mode"], "full");
  EXPECT_EQ(report_["host_header"], "torch");  // the last mode: torch's own files
  EXPECT_EQ(seen_[1].second, "#include \"kz_torch_lite.h\"\n__global__ void k(float* x) {}\n");
  EXPECT_EQ(seen_[2].second, kCu);
  EXPECT_EQ(seen_[2].first, "#include <torch/extension.h>\nint main_part;\n");
}

TEST_F(BuildModesTest, DeviceErrorsNoHeaderCanCureEndTheFallbacks) {
  NinjaOutcome out = Run({Fail("cuda.cuda.o", "/b/cuda.cu(2): error: expected a \";\"")});
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(seen_.size(), 1u);
  EXPECT_TRUE(report_.contains("fallbacks_skipped"));
}

TEST_F(BuildModesTest, TheLastModesErrorIsReturned) {
  NinjaOutcome out = Run({Fail("cuda.cuda.o"), Fail("cuda.cuda.o"), Fail("cuda.cuda.o", "error: last")});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.message.find("error: last"), std::string::npos);
  EXPECT_EQ(seen_.size(), 3u);
}

// ninja killed by a signal, timed out or not started: the machine failed, not the sources;
// no other mode runs (it would fail the same way, or run past the deadline).
TEST_F(BuildModesTest, AMachineFailureEndsTheModesAtOnce) {
  NinjaOutcome killed{false, "Error building extension 'e'\n(ninja killed by SIGKILL)", true};
  NinjaOutcome out = Run({killed});
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.machine);
  EXPECT_EQ(seen_.size(), 1u);
  EXPECT_FALSE(report_.contains("fallbacks"));
}

TEST_F(BuildModesTest, UnsplittableSourceStartsWithLite) {
  EXPECT_TRUE(Run({}, /*splittable=*/false).ok);
  EXPECT_EQ(report_["header_mode"], "lite");
  EXPECT_EQ(report_["split_skipped"], "no kernel");
}

// The facts cache: the stand-in op counts its calls and answers with a probe that matches.
nlohmann::json Probe() {
  return {{"name", "p"},
          {"functions", {"f"}},
          {"main_cpp",
           "#include <torch/extension.h>\n\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
           "m.def(\"f\", torch::wrap_pybind_function(f), \"f\");\n}"},
          {"cuda_cu", nullptr}};
}

TEST(BuildFactsTest, KeyCoversFlagsAndEnvironmentAndRefusesWhatItCannotReproduce) {
  std::string why;
  std::map<std::string, std::string> env{{"TORCH_CUDA_ARCH_LIST", "9.0"}};
  nlohmann::json call = {{"cpp_sources", "x"}, {"cuda_sources", "y"}, {"extra_cflags", {"-O3"}}};
  auto a = FactsKeyText(call, env, {{"torch", "2.11"}}, &why);
  ASSERT_TRUE(a) << why;
  nlohmann::json other = call;
  other["extra_cflags"] = {"-O2"};
  EXPECT_NE(*FactsKeyText(other, env, {{"torch", "2.11"}}, &why), *a);
  EXPECT_NE(*FactsKeyText(call, env, {{"torch", "2.12"}}, &why), *a);
  EXPECT_NE(*FactsKeyText(call, {{"TORCH_CUDA_ARCH_LIST", "8.0"}}, {{"torch", "2.11"}}, &why), *a);
  EXPECT_FALSE(FactsKeyText(call, {}, {{"torch", "2.11"}}, &why));  // torch would ask the GPUs
  other["extra_cflags"] = "-O3";                                    // torch iterates a string by character
  EXPECT_FALSE(FactsKeyText(other, env, {}, &why));
  EXPECT_FALSE(FactsKeyText({{"cpp_sources", "x"}, {"with_cuda", 1}}, env, {}, &why));
}

// torch's -L flags follow which of CUDA_HOME/lib64 and lib exist: the same CUDA_HOME with
// another layout must not reuse a template (review of session 15).
TEST(BuildFactsTest, KeyCoversTheCudaLibraryLayout) {
  std::string why, err, home = util::MakeTempDir(::testing::TempDir(), "cuda-home-", &err);
  ASSERT_FALSE(home.empty()) << err;
  std::map<std::string, std::string> env{{"TORCH_CUDA_ARCH_LIST", "9.0"}, {"CUDA_HOME", home}};
  nlohmann::json call = {{"cpp_sources", "x"}, {"cuda_sources", "y"}};
  auto without = FactsKeyText(call, env, {{"torch", "2.11"}}, &why);
  ASSERT_TRUE(without) << why;
  ASSERT_TRUE(util::MakeDirs(home + "/lib64", &err)) << err;
  auto with = FactsKeyText(call, env, {{"torch", "2.11"}}, &why);
  ASSERT_TRUE(with) << why;
  EXPECT_NE(*with, *without);
  util::RemoveAll(home);
}

TEST(BuildFactsTest, AskedOnceCachedAndATornFileIsAskedAgain) {
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "facts-", &err);
  int asked = 0;
  AskFacts ask = [&](const nlohmann::json& req, std::string*) -> std::optional<nlohmann::json> {
    ++asked;
    EXPECT_EQ(req["op"], "build_facts");
    return nlohmann::json{{"ok", true}, {"ninja", "T @KZ_NAME@"}, {"probe", Probe()}};
  };
  nlohmann::json call = {{"cpp_sources", "x"}};
  EXPECT_EQ(NinjaTemplateFor(call, "key", dir, dir + "/s", ask).ninja, "T @KZ_NAME@");
  NinjaFacts again = NinjaTemplateFor(call, "key", dir, dir + "/s", ask);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(asked, 1);
  std::string path = dir + "/" + util::Hash128Hex("key") + ".json";
  util::WriteFileAtomic(path, "{\"format\": 1, \"inputs\": \"ke", &err);  // torn mid-write
  EXPECT_EQ(NinjaTemplateFor(call, "key", dir, dir + "/s", ask).ninja, "T @KZ_NAME@");
  EXPECT_EQ(asked, 2);
  EXPECT_TRUE(NinjaTemplateFor(call, "key", dir, dir + "/s", ask).cached);  // rewritten whole
}

TEST(BuildFactsTest, ALayoutThatDiffersFromTorchsGivesNoTemplate) {
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "facts-", &err);
  nlohmann::json probe = Probe();
  probe["main_cpp"] = "#include <torch/extension.h>\nsomething else";
  AskFacts ask = [&](const nlohmann::json&, std::string*) -> std::optional<nlohmann::json> {
    return nlohmann::json{{"ok", true}, {"ninja", "T"}, {"probe", probe}};
  };
  NinjaFacts f = NinjaTemplateFor({{"cpp_sources", "x"}}, "k2", dir, dir + "/s", ask);
  EXPECT_EQ(f.ninja, "");
  EXPECT_NE(f.why.find("layout"), std::string::npos);
}
}  // namespace
}  // namespace kz::compile
