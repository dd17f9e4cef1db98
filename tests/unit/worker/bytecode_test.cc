// The bytecode cache (worker/bytecode.h) against a real python3 and a stand-in torch package:
// wanted only when torch ships no bytecode, filled by the warm process, then handed to children.
#include "worker/bytecode.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "util/fs.h"

namespace kz::worker {
namespace {
namespace fs = std::filesystem;

// A package dir holding kz_worker (the real probe and warm modules) and a torch without bytecode.
WorkerConfig StandIn(bool torch_has_bytecode) {
  std::string err;
  std::string dir = util::MakeTempDir(::testing::TempDir(), "bytecode-", &err);
  util::MakeDirs(dir + "/kz_worker", &err);
  util::MakeDirs(dir + "/torch", &err);
  util::WriteFileAtomic(dir + "/kz_worker/__init__.py", "", &err);
  for (const char* m : {"probe.py", "warm_bytecode.py"})
    fs::copy_file(fs::path(KZ_SOURCE_DIR) / "python/kz_worker" / m, fs::path(dir) / "kz_worker" / m);
  util::WriteFileAtomic(dir + "/torch/__init__.py", "X = 1\n", &err);
  for (const char* other : {"triton", "numpy", "sympy", "mpmath"}) {  // shadow the real ones: fast
    util::MakeDirs(dir + "/" + other, &err);
    util::WriteFileAtomic(dir + "/" + other + "/__init__.py", "", &err);
  }
  util::WriteFileAtomic(dir + "/torch/version.py", "__version__ = '9.9'\ncuda = None\n", &err);
  if (torch_has_bytecode) {
    std::string cmd = "python3 -c \"import py_compile; py_compile.compile('" + dir +
                      "/torch/version.py')\"";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  WorkerConfig config;
  config.python = "python3";
  config.package_dir = dir;
  return config;
}

bool WaitFor(const std::string& path, double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool HasPrefixEnv(const util::ProcessSpec& spec, const std::string& dir) {
  for (const auto& [k, v] : spec.env)
    if (k == "PYTHONPYCACHEPREFIX") return v == dir;
  return false;
}
}  // namespace

TEST(Bytecode, FilledInTheBackgroundThenGivenToChildren) {
  WorkerConfig cfg = StandIn(false);
  std::string cache = cfg.package_dir + "/cache";
  PrepareBytecode(&cfg, cache);
  ASSERT_EQ(cfg.bytecode_dir, cache + "/pycache");
  ASSERT_TRUE(WaitFor(cfg.bytecode_marker, 60)) << "the warm process never wrote its marker";
  EXPECT_FALSE(fs::exists(cfg.bytecode_marker + ".lock"));
  EXPECT_TRUE(BytecodeReady(cfg));
  // torch's sources compiled under the prefix (a mirror of their absolute directory, with no
  // __pycache__ level), not beside them.
  fs::path mirrored = fs::path(cfg.bytecode_dir) / fs::path(cfg.package_dir).relative_path() / "torch";
  bool compiled = false;
  if (fs::is_directory(mirrored))
    for (const auto& e : fs::directory_iterator(mirrored))
      compiled = compiled || e.path().filename().string().rfind("version.cpython-", 0) == 0;
  EXPECT_TRUE(compiled) << mirrored;
  EXPECT_FALSE(fs::exists(fs::path(cfg.package_dir) / "torch/__pycache__"));
  WorkerCall call;
  EXPECT_TRUE(HasPrefixEnv(MakeWorkerSpec(cfg, call), cfg.bytecode_dir));
}

TEST(Bytecode, NotWantedWhenTorchShipsItsOwn) {
  WorkerConfig cfg = StandIn(true);
  PrepareBytecode(&cfg, cfg.package_dir + "/cache");
  EXPECT_TRUE(cfg.bytecode_dir.empty());
  EXPECT_FALSE(BytecodeReady(cfg));
  WorkerCall call;
  EXPECT_FALSE(HasPrefixEnv(MakeWorkerSpec(cfg, call), ""));
}

TEST(Bytecode, ChildrenDoNotGetAnUnfinishedCache) {
  WorkerConfig cfg = StandIn(false);
  cfg.bytecode_dir = cfg.package_dir + "/cache/pycache";
  cfg.bytecode_marker = cfg.bytecode_dir + "/warm-missing";
  WorkerCall call;
  EXPECT_FALSE(BytecodeReady(cfg));
  EXPECT_FALSE(HasPrefixEnv(MakeWorkerSpec(cfg, call), cfg.bytecode_dir));
}

TEST(Bytecode, OffByEnvironment) {
  WorkerConfig cfg = StandIn(false);
  ::setenv("KZ_BYTECODE", "off", 1);
  PrepareBytecode(&cfg, cfg.package_dir + "/cache");
  ::unsetenv("KZ_BYTECODE");
  EXPECT_TRUE(cfg.bytecode_dir.empty());
}

}  // namespace kz::worker
