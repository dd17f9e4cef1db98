// The jail against the real kernel: namespaces, mounts, limits and seccomp, with /bin/sh as
// the child (no Python needed, so it runs as root and as an unprivileged user alike; ctest
// runs it both ways: sandbox_jail and sandbox_jail_unprivileged).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <atomic>
#include <random>
#include <thread>

#include "sandbox/sandbox.h"
#include "sandbox/seccomp.h"
#include "util/fs.h"

namespace kz::sandbox {
namespace {
namespace fs = std::filesystem;

struct Outcome {
  util::ProcessResult r;
  std::string out() const { return r.stdout_tail; }
  bool ok() const { return r.end == util::ProcessEnd::kExited && r.exit_code == 0; }
};

class JailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(fs::temp_directory_path().string(), "kz-jail-test-", &err);
    ASSERT_FALSE(dir_.empty()) << err;
    policy_.stage_base = dir_ + "/stage";
  }
  void TearDown() override { util::RemoveAll(dir_); }
  Outcome Sh(const std::string& script, std::shared_ptr<Jail> jail = nullptr) {
    util::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.wall_limit_s = 30;
    spec.jail = jail ? jail : Jail::Create(policy_);
    return {util::RunProcess(spec)};
  }
  std::string File(const std::string& name, const std::string& text, mode_t mode = 0644) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
  std::string dir_;
  Policy policy_;
};

TEST_F(JailTest, SystemIsReadOnlyAndScratchIsWritable) {
  Outcome r = Sh("touch /usr/kz-probe 2>/dev/null && echo wrote-usr; echo hi > /tmp/x && cat /tmp/x; "
             "echo $TMPDIR; test -w /scratch && echo scratch-ok");
  ASSERT_TRUE(r.ok()) << r.r.stderr_tail;
  EXPECT_EQ(r.out().find("wrote-usr"), std::string::npos);
  EXPECT_NE(r.out().find("hi"), std::string::npos);
  EXPECT_NE(r.out().find("scratch-ok"), std::string::npos);
  EXPECT_FALSE(fs::exists("/usr/kz-probe"));
}

TEST_F(JailTest, HostFilesOutsideThePolicyAreInvisible) {
  std::string secret = File("secret.txt", "s3cret");
  Outcome r = Sh("cat " + secret + " 2>&1; ls " + dir_ + " 2>&1; test -e /root && echo root-visible; "
             "test -e " + std::string(std::getenv("HOME") ? std::getenv("HOME") : "/root") + " && echo home-visible");
  EXPECT_EQ(r.out().find("s3cret"), std::string::npos) << r.out();
  EXPECT_EQ(r.out().find("root-visible"), std::string::npos) << r.out();
  EXPECT_EQ(r.out().find("home-visible"), std::string::npos) << r.out();
}

TEST_F(JailTest, ReadOnlyPathsAreVisibleButNotWritable) {
  std::string f = File("visible.txt", "hello");
  policy_.read_only = {f};
  Outcome r = Sh("cat " + f + "; echo x >> " + f + " 2>/dev/null && echo appended");
  EXPECT_NE(r.out().find("hello"), std::string::npos) << r.r.stderr_tail;
  EXPECT_EQ(r.out().find("appended"), std::string::npos);
  std::string back;
  std::string err;
  ASSERT_TRUE(util::ReadFile(f, &back, &err));
  EXPECT_EQ(back, "hello");
}

TEST_F(JailTest, WritableDirectoriesReachTheHost) {
  std::string w = dir_ + "/out";
  fs::create_directories(w);
  ::chmod(w.c_str(), 0777);
  policy_.writable = {w};
  Outcome r = Sh("echo built > " + w + "/lib.so");
  ASSERT_TRUE(r.ok()) << r.r.stderr_tail;
  EXPECT_TRUE(fs::exists(w + "/lib.so"));
}

TEST_F(JailTest, StagedInputsAreReadableEvenWhenPrivate) {
  std::string f = File("cand.py", "print(1)", 0600);
  auto jail = Jail::Create(policy_);
  std::string err;
  std::string staged = jail->Stage(f, &err);
  ASSERT_FALSE(staged.empty()) << err;
  Outcome r = Sh("cat " + staged + "; echo x > " + staged + " 2>/dev/null && echo overwrote", jail);
  EXPECT_NE(r.out().find("print(1)"), std::string::npos) << r.r.stderr_tail;
  EXPECT_EQ(r.out().find("overwrote"), std::string::npos);
}

TEST_F(JailTest, StagedInputsKeepTheirNames) {
  // Compiler diagnostics and tracebacks name the staged file: it must be the candidate's name.
  std::string a = File("relu.py", "a"), b = dir_ + "/other/relu.py";
  fs::create_directories(dir_ + "/other");
  std::ofstream(b) << "b";
  auto jail = Jail::Create(policy_);
  std::string err;
  std::string sa = jail->Stage(a, &err), sb = jail->Stage(b, &err);
  ASSERT_FALSE(sa.empty() || sb.empty()) << err;
  EXPECT_EQ(fs::path(sa).filename(), "relu.py");
  EXPECT_EQ(fs::path(sb).filename(), "relu.py");
  EXPECT_NE(sa, sb) << "two inputs of one name stay apart";
  Outcome r = Sh("cat " + sa + " " + sb, jail);
  EXPECT_EQ(r.out(), "ab") << r.r.stderr_tail;
}

TEST_F(JailTest, OwnPidNamespaceNetworkAndNoCapabilities) {
  Outcome r = Sh("echo pid=$$; ls /proc | grep -c '^[0-9]'; cat /proc/net/dev; grep CapEff /proc/self/status; id -u");
  ASSERT_TRUE(r.ok()) << r.r.stderr_tail;
  EXPECT_NE(r.out().find("pid=1\n"), std::string::npos) << r.out();
  EXPECT_NE(r.out().find("lo:"), std::string::npos);
  EXPECT_EQ(r.out().find("eth"), std::string::npos) << r.out();
  EXPECT_NE(r.out().find("CapEff:\t0000000000000000"), std::string::npos) << r.out();
  std::string uid = std::to_string(::geteuid() == 0 ? 65534 : ::geteuid());
  EXPECT_NE(r.out().find("\n" + uid + "\n"), std::string::npos) << r.out();
}

TEST_F(JailTest, SeccompDeniesNamespacesAndMounts) {
  Outcome r = Sh("unshare -U true 2>&1 && echo unshared; mount -t tmpfs none /tmp 2>&1 && echo mounted; "
             "umount /proc 2>&1 && echo unmounted");
  EXPECT_EQ(r.out().find("unshared"), std::string::npos) << r.out();
  EXPECT_EQ(r.out().find("mounted"), std::string::npos) << r.out();
  EXPECT_EQ(r.out().find("unmounted"), std::string::npos) << r.out();
  EXPECT_FALSE(DeniedSyscalls().empty());
}

TEST_F(JailTest, LimitsCannotBeRaised) {
  policy_.limits.nofile = 256;
  Outcome r = Sh("ulimit -n; ulimit -n 100000 2>/dev/null && echo raised; ulimit -Hn");
  EXPECT_NE(r.out().find("256\n"), std::string::npos) << r.out();
  EXPECT_EQ(r.out().find("raised"), std::string::npos) << r.out();
}

TEST_F(JailTest, ForkBombStopsAtTheProcessLimit) {
  policy_.limits.nproc = 32;
  // dash gives up at the first fork that fails; each started job is counted before it.
  Outcome r = Sh("i=0; while [ $i -lt 1000 ]; do i=$((i+1)); echo $i; sleep 5 & done");
  EXPECT_EQ(r.r.end, util::ProcessEnd::kExited);
  EXPECT_NE(r.r.stderr_tail.find("fork"), std::string::npos) << r.r.stderr_tail;
  std::string out = r.out();
  while (!out.empty() && out.back() == '\n') out.pop_back();
  int last = std::atoi(out.substr(out.rfind('\n') + 1).c_str());
  EXPECT_GT(last, 0);
  EXPECT_LE(last, 40) << "jobs started";
}

TEST_F(JailTest, NoProcessOutlivesTheChild) {
  std::string mark = "kz-orphan-" + std::to_string(std::random_device{}());
  Outcome r = Sh("(sleep 300; echo " + mark + ") & exit 0");
  ASSERT_TRUE(r.ok()) << r.r.stderr_tail;
  ::usleep(200 * 1000);
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string cmd, err;
    if (util::ReadFile(e.path().string() + "/cmdline", &cmd, &err)) {
      EXPECT_EQ(cmd.find(mark), std::string::npos) << "left behind: " << e.path();
    }
  }
}

TEST_F(JailTest, ScratchHasAQuota) {
  policy_.limits.scratch_bytes = 8 << 20;
  Outcome r = Sh("dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; echo rc=$?");
  EXPECT_NE(r.out().find("No space left"), std::string::npos) << r.out();
}

TEST_F(JailTest, EtcSecretsAreMasked) {
  if (!fs::exists("/etc/shadow")) GTEST_SKIP();
  Outcome r = Sh("wc -c < /etc/shadow");
  EXPECT_EQ(std::atoi(r.out().c_str()), 0) << r.out() << r.r.stderr_tail;
}

TEST_F(JailTest, ProbeFindsEveryMechanismHere) {
  HostSupport h = Probe(policy_.stage_base);
  EXPECT_TRUE(h.complete()) << h.detail;
  Features f;
  std::string err;
  EXPECT_TRUE(Check(Mode::kRequire, policy_.stage_base, &f, &err)) << err;
  nlohmann::json d = Describe(Mode::kRequire, f, Limits{});
  EXPECT_EQ(d["status"], "applied");
  EXPECT_EQ(Describe(Mode::kBestEffort, Features{true, false, true, true}, Limits{})["status"], "partial");
}

TEST_F(JailTest, StageIsRemovedWithTheJail) {
  std::string stage;
  {
    auto jail = Jail::Create(policy_);
    ASSERT_TRUE(jail->Error().empty()) << jail->Error();
    ASSERT_TRUE(Sh("true", jail).ok());
    stage = fs::path(jail->Stage(File("a", "a"), &stage)).parent_path().parent_path().parent_path().string();
    EXPECT_TRUE(fs::exists(stage));
  }
  EXPECT_FALSE(fs::exists(stage));
}

TEST_F(JailTest, TritonCacheIsSharedReadOnlyUnderAPrivateOverlay) {
  std::string host = dir_ + "/triton";
  fs::create_directories(host + "/abc");
  std::ofstream(host + "/abc/kernel.json") << "seeded";
  ::chmod(dir_.c_str(), 0755);
  policy_.triton_cache = host;
  Outcome r = Sh("cat /scratch/triton/abc/kernel.json; mkdir /scratch/triton/new && echo x > /scratch/triton/new/k "
                 "&& echo wrote; echo evil > /scratch/triton/abc/kernel.json && echo overwrote");
  EXPECT_NE(r.out().find("seeded"), std::string::npos) << r.out() << r.r.stderr_tail;
  EXPECT_NE(r.out().find("wrote"), std::string::npos) << r.out();
  EXPECT_FALSE(fs::exists(host + "/new"));
  std::string back, err;
  ASSERT_TRUE(util::ReadFile(host + "/abc/kernel.json", &back, &err));
  EXPECT_EQ(back, "seeded");
}

// kz serve starts children from several threads at once: each jailed child must go on once
// its own parent is done with it, whatever copies of set-up fds other threads' children hold.
TEST_F(JailTest, ChildrenStartedFromManyThreadsAtOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        util::ProcessSpec spec;
        spec.argv = {"true"};
        spec.wall_limit_s = 20;
        spec.jail = Jail::Create(policy_);
        auto r = util::RunProcess(spec);
        if (r.end == util::ProcessEnd::kExited && r.exit_code == 0) ++ok;
        else ADD_FAILURE() << util::ProcessEndName(r.end) << " " << r.exit_code << " " << r.spawn_error << r.stderr_tail;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 30);
}

// Both of ProcessSet's channel forms reach a jailed child: fd 3 (KZ_PROTOCOL_FD, the worker
// protocol) and stdin/stdout (stdio_channel, streamed while it runs).
TEST_F(JailTest, ChannelReachesTheJailedChildAtFd3AndOnStdio) {
  util::ProcessSpec fd3;
  fd3.argv = {"/bin/sh", "-c", "test \"$KZ_PROTOCOL_FD\" = 3 && head -c 5 <&3 >&3"};
  fd3.channel = true;
  fd3.channel_input = "hello";
  fd3.wall_limit_s = 30;
  fd3.jail = Jail::Create(policy_);
  auto r = util::RunProcess(fd3);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_tail;
  EXPECT_EQ(r.channel_data, "hello");

  util::ProcessSpec stdio;
  stdio.argv = {"/bin/sh", "-c", "test -z \"$KZ_PROTOCOL_FD\" && exec cat"};
  stdio.channel = stdio.stdio_channel = stdio.stream_channel = true;
  stdio.jail = Jail::Create(policy_);
  util::ProcessSet set;
  auto id = set.Start(stdio);
  ASSERT_TRUE(set.Send(id, "ping"));
  std::string got;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (got.size() < 4 && std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(set.WaitAny(5000).empty()) << "cat ended early";
    got += set.TakeChannel(id);
  }
  EXPECT_EQ(got, "ping");
  ASSERT_TRUE(set.Expire(id));
  auto done = set.WaitAny(5000);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].second.end, util::ProcessEnd::kTimedOut) << done[0].second.stderr_tail;
}

}  // namespace
}  // namespace kz::sandbox
