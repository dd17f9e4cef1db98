// The bytecode cache (worker/bytecode.h) seen from a sandboxed child: PYTHONPYCACHEPREFIX is
// readable inside the jail once the cache is complete, and never writable; the rest of the
// cache directory stays out of sight. A real jail with /bin/sh as the child (runs as root and
// as an unprivileged user; skipped where the host has no user namespaces).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "sandbox/sandbox.h"
#include "util/fs.h"
#include "worker/worker_client.h"

namespace kz::worker {
namespace {
namespace fs = std::filesystem;

class BytecodeJailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(fs::temp_directory_path().string(), "kz-bytecode-jail-", &err);
    ASSERT_FALSE(dir_.empty()) << err;
    ::chmod(dir_.c_str(), 0755);
    cache_ = dir_ + "/cache";
    fs::create_directories(cache_ + "/pycache/usr/lib/python3/torch");
    fs::create_directories(cache_ + "/entries");
    std::ofstream(cache_ + "/pycache/usr/lib/python3/torch/version.cpython-312.pyc") << "bytecode";
    std::ofstream(cache_ + "/entries/other.so") << "library";
    for (const auto& d : {cache_, cache_ + "/pycache", cache_ + "/pycache/usr", cache_ + "/pycache/usr/lib",
                          cache_ + "/pycache/usr/lib/python3", cache_ + "/pycache/usr/lib/python3/torch"})
      ::chmod(d.c_str(), 0755);
    config_.python = "python3";  // found in PATH: nothing of the host beyond the system dirs
    config_.sandbox.mode = sandbox::Mode::kRequire;
    config_.sandbox.stage_base = dir_ + "/stage";
    config_.sandbox.features = sandbox::Probe(config_.sandbox.stage_base).features;
    config_.bytecode_dir = cache_ + "/pycache";
    config_.bytecode_marker = cache_ + "/pycache/warm-0123456789abcdef";
  }
  void TearDown() override { util::RemoveAll(dir_); }

  // Runs `script` with the spec MakeWorkerSpec gives a sandboxed call, /bin/sh for python.
  util::ProcessResult Sh(const std::string& script) {
    WorkerCall call;
    call.sandboxed = true;
    util::ProcessSpec spec = MakeWorkerSpec(config_, call);
    spec.argv = {"/bin/sh", "-c", script};
    spec.channel = false;
    spec.channel_input.clear();
    spec.wall_limit_s = 30;
    return util::RunProcess(spec);
  }
  std::string dir_, cache_;
  WorkerConfig config_;
};

TEST_F(BytecodeJailTest, ChildrenReadTheCacheAndNeverWriteIt) {
  if (!config_.sandbox.features.namespaces) GTEST_SKIP() << "no user namespaces on this host";
  std::ofstream(config_.bytecode_marker) << "";
  std::string pyc = cache_ + "/pycache/usr/lib/python3/torch/version.cpython-312.pyc";
  auto r = Sh("echo prefix=$PYTHONPYCACHEPREFIX; cat " + pyc + "; echo; "
              "echo x > " + pyc + " 2>/dev/null && echo wrote-pyc; "
              "touch " + cache_ + "/pycache/new.pyc 2>/dev/null && echo created-pyc; "
              "mkdir " + cache_ + "/pycache/usr/lib/python3/torch/sub 2>/dev/null && echo created-dir; "
              "cat " + cache_ + "/entries/other.so 2>/dev/null && echo saw-entries; "
              "touch " + cache_ + "/poison 2>/dev/null && echo wrote-cache; true");
  ASSERT_EQ(r.end, util::ProcessEnd::kExited) << r.stderr_tail;
  std::string out = r.stdout_tail;
  EXPECT_NE(out.find("prefix=" + config_.bytecode_dir + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("bytecode"), std::string::npos) << "the cache is readable inside: " << out << r.stderr_tail;
  for (const char* w : {"wrote-pyc", "created-pyc", "created-dir", "saw-entries"})
    EXPECT_EQ(out.find(w), std::string::npos) << w << ": " << out;
  // "wrote-cache" may print: this test's directory is under /tmp, which inside is the child's
  // private scratch (the bind's parent directories are made there). The host must not see it.
  std::string text;
  std::ifstream(pyc) >> text;
  EXPECT_EQ(text, "bytecode");
  EXPECT_FALSE(fs::exists(cache_ + "/pycache/new.pyc"));
  EXPECT_FALSE(fs::exists(cache_ + "/poison"));
}

TEST_F(BytecodeJailTest, AnIncompleteCacheIsNeitherNamedNorMounted) {
  if (!config_.sandbox.features.namespaces) GTEST_SKIP() << "no user namespaces on this host";
  auto r = Sh("echo prefix=$PYTHONPYCACHEPREFIX; test -e " + config_.bytecode_dir + " && echo visible; true");
  ASSERT_EQ(r.end, util::ProcessEnd::kExited) << r.stderr_tail;
  EXPECT_NE(r.stdout_tail.find("prefix=\n"), std::string::npos) << r.stdout_tail;
  EXPECT_EQ(r.stdout_tail.find("visible"), std::string::npos) << r.stdout_tail;
}

}  // namespace
}  // namespace kz::worker
