// Precompiled headers and the tool runner against stand-in compilers (shell scripts): keys,
// a hanging compiler killed with its whole process group, a header that fails to compile
// marked once, a root that is not writable, the shared lock that keeps eviction away.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "compile/pch.h"
#include "compile/tool_runner.h"
#include "util/fs.h"

namespace kz::compile {
namespace {
class PchStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "pch-", &err);
    root_ = dir_ + "/pch";
  }
  // A compiler script: `body` runs with "$@" (the output is the argument after -o); every
  // run appends a line to <dir>/runs.
  std::string Compiler(const std::string& body) {
    std::string path = dir_ + "/cc", err;
    util::WriteFileAtomic(path, "#!/bin/bash\necho run >> " + dir_ + "/runs\n" + body + "\n", &err);
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }
  int Runs() {
    std::ifstream in(dir_ + "/runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  std::string dir_, root_;
};

const char* kWriteOutput = "out=; while [[ $# -gt 0 ]]; do [[ $1 == -o ]] && out=$2; shift; done; echo pch > \"$out\"";

TEST_F(PchStoreTest, KeyIsLabelledOverEveryInput) {
  auto flags = PchFlags("-DTORCH_EXTENSION_NAME=ext1 -O2  -fPIC");
  EXPECT_EQ(flags, (std::vector<std::string>{"-O2", "-fPIC"}));
  std::string key = PchKey("c++", "2.11", flags, kPchName);
  EXPECT_EQ(key.size(), 24u);  // cache_evict.cc's PCH directories
  EXPECT_EQ(key, PchKey("c++", "2.11", PchFlags("-DTORCH_EXTENSION_NAME=other -O2 -fPIC"), kPchName));
  EXPECT_NE(key, PchKey("c++", "2.11", {"-O2 -fPIC"}, kPchName));  // not an unlabelled join
  EXPECT_NE(key, PchKey("c++", "2.12", flags, kPchName));
  EXPECT_NE(key, PchKey("c++", "2.11", flags, kSlimName));
}

TEST_F(PchStoreTest, BuiltOnceThenReusedAndHeldAgainstEviction) {
  std::string cc = Compiler(kWriteOutput);
  auto store = std::make_unique<PchStore>(root_, "2.11", ToolRunner{});
  PchOutcome a = store->Ensure(cc, "-O2", kPchName);
  ASSERT_EQ(a.error, "");
  EXPECT_TRUE(util::PathExists(a.dir + "/" + kPchName + ".gch"));
  EXPECT_EQ(a.dir, root_ + "/" + PchKey(cc, "2.11", {"-O2"}, kPchName));
  PchOutcome b = PchStore(root_, "2.11", ToolRunner{}).Ensure(cc, "-O2", kPchName);
  EXPECT_EQ(b.dir, a.dir);
  EXPECT_EQ(b.seconds, 0);
  EXPECT_EQ(Runs(), 1);
  int fd = ::open((a.dir + ".lock").c_str(), O_RDWR);
  EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0);  // held shared while the store lives
  store.reset();
  EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  ::close(fd);
}

TEST_F(PchStoreTest, AHeaderThatFailsToCompileIsMarkedAndTriedOnce) {
  std::string cc = Compiler("echo 'kz_torch_host.h:3: error: no such header' >&2; exit 1");
  PchStore store(root_, "2.11", ToolRunner{});
  PchOutcome a = store.Ensure(cc, "-O2", kSlimName);
  EXPECT_EQ(a.dir, "");
  EXPECT_NE(a.error.find("no such header"), std::string::npos);
  PchOutcome b = PchStore(root_, "2.11", ToolRunner{}).Ensure(cc, "-O2", kSlimName);
  EXPECT_NE(b.error.find("did not compile with these flags"), std::string::npos);
  EXPECT_EQ(Runs(), 1);
}

TEST_F(PchStoreTest, AHangingCompilerIsKilledWithItsGroupAndNotMarked) {
  std::string cc = Compiler("sleep 300 & echo $! > " + dir_ + "/child; wait");
  ToolRunner runner;
  runner.timeout_s = 1;
  auto t0 = std::chrono::steady_clock::now();
  PchOutcome a = PchStore(root_, "2.11", runner).Ensure(cc, "-O2", kSlimName);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_NE(a.error.find("timed out"), std::string::npos) << a.error;
  std::string child, err;
  ASSERT_TRUE(util::ReadFile(dir_ + "/child", &child, &err));
  std::string stat;  // the compiler's own child is gone too (or a zombie left to init)
  bool gone = !util::ReadFile("/proc/" + child.substr(0, child.find('\n')) + "/stat", &stat, &err) ||
              stat.find(") Z ") != std::string::npos;
  EXPECT_TRUE(gone) << stat;
  std::string key = PchKey(cc, "2.11", {"-O2"}, kSlimName);
  EXPECT_FALSE(util::PathExists(root_ + "/" + key + "/" + kSlimName + ".failed"));  // tried again next time
}

TEST_F(PchStoreTest, ARootThatIsNotWritableIsAnErrorNotACrash) {
  std::string err;
  util::WriteFileAtomic(dir_ + "/file", "", &err);
  PchOutcome a = PchStore(dir_ + "/file/pch", "2.11", ToolRunner{}).Ensure(Compiler(kWriteOutput), "-O2", kPchName);
  EXPECT_EQ(a.dir, "");
  EXPECT_NE(a.error, "");
}

TEST_F(PchStoreTest, RunnerDeadlineAndMissingTool) {
  ToolRunner runner;
  runner.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  ToolRun r = runner.Run({"sleep", "30"});
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok);
  ToolRun missing = ToolRunner{}.Run({dir_ + "/no-such-tool"});
  EXPECT_FALSE(missing.ok);
  EXPECT_FALSE(missing.timed_out);
}
}  // namespace
}  // namespace kz::compile
