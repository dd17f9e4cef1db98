// A spawn that fails (no program, no free fd at each step of its set-up) leaves no fd of
// its own open: the fds of this process are counted in /proc/self/fd before and after.
#include "util/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "util/subprocess.h"
#include "util/unique_fd.h"

namespace kz::util {
namespace {

// Open fds of this process (the listing's own fd not counted).
int OpenFdCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;
}

ProcessSpec True(bool channel) {
  ProcessSpec s;
  s.argv = {"/bin/true"};
  s.channel = channel;
  return s;
}

// Runs `spec` in a forked child of the test with exactly `free_fds` descriptors left under a
// lowered RLIMIT_NOFILE (the rest taken by copies of /dev/null). Returns the child's report:
// "<end>|<spawn_error>|<fds before>|<fds after>", or "setup: ..." when it could not arrange it.
std::string RunWithFreeFds(const ProcessSpec& spec, int free_fds) {
  int report[2];
  if (::pipe(report) != 0) return "setup: pipe";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(report[0]);
    std::string out;
    int before = OpenFdCount();
    rlimit lim{256, 256};
    std::vector<int> filler;
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      out = "setup: setrlimit";
    } else {
      for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) filler.push_back(fd);
      if (filler.size() < static_cast<size_t>(free_fds)) out = "setup: too few fds";
    }
    if (out.empty()) {
      for (int i = 0; i < free_fds; ++i) ::close(filler.back()), filler.pop_back();
      ProcessResult r = RunProcess(spec);
      for (int fd : filler) ::close(fd);
      out = std::string(ProcessEndName(r.end)) + "|" + r.spawn_error + "|" + std::to_string(before) + "|" +
            std::to_string(OpenFdCount());
    }
    ssize_t n = ::write(report[1], out.data(), out.size());
    _exit(n == static_cast<ssize_t>(out.size()) ? 0 : 1);
  }
  ::close(report[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = ::read(report[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(report[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? got : "setup: the child failed: " + got;
}

// The spawn failed at `step` and the fd count is back where it was.
void ExpectCleanFailure(const std::string& report, const std::string& step) {
  SCOPED_TRACE(report);
  ASSERT_EQ(report.rfind("setup:", 0), std::string::npos);
  size_t a = report.find('|'), b = report.find('|', a + 1), c = report.find('|', b + 1);
  EXPECT_EQ(report.substr(0, a), "spawn_failed");
  EXPECT_EQ(report.substr(a + 1, b - a - 1).rfind(step + ": ", 0), 0u) << "fails at " << step;
  EXPECT_NE(report.find("Too many open files"), std::string::npos);
  EXPECT_EQ(report.substr(b + 1, c - b - 1), report.substr(c + 1)) << "fds before | after";
}

TEST(Spawn, EachSetUpStepThatRunsOutOfFdsClosesWhatItOpened) {
  ExpectCleanFailure(RunWithFreeFds(True(false), 0), "pipe");
  ExpectCleanFailure(RunWithFreeFds(True(false), 1), "pipe");
  ExpectCleanFailure(RunWithFreeFds(True(false), 3), "pipe");  // the stdout pipe opened, stderr's not
  ExpectCleanFailure(RunWithFreeFds(True(false), 4), "open /dev/null");
  ExpectCleanFailure(RunWithFreeFds(True(true), 5), "socketpair");
  ExpectCleanFailure(RunWithFreeFds(True(true), 6), "open /dev/null");
}

TEST(Spawn, WithJustEnoughFdsTheChildRunsAndEverythingIsClosed) {
  std::string report = RunWithFreeFds(True(true), 7);
  ASSERT_EQ(report.rfind("exited||", 0), 0u) << report;
  size_t c = report.rfind('|'), b = report.rfind('|', c - 1);
  EXPECT_EQ(report.substr(b + 1, c - b - 1), report.substr(c + 1)) << report;
}

TEST(Spawn, AMissingProgramOrEmptyArgvLeavesNoFdOpen) {
  int before = OpenFdCount();
  ProcessSpec missing = True(true);
  missing.argv = {"/nonexistent/kz-no-such-program"};
  EXPECT_EQ(RunProcess(missing).exit_code, 127);
  ProcessResult empty = RunProcess(ProcessSpec{});
  EXPECT_EQ(empty.end, ProcessEnd::kSpawnFailed);
  EXPECT_EQ(empty.spawn_error, "empty argv");
  ProcessSet set;  // failures collected from a set, several at once
  for (int i = 0; i < 8; ++i) set.Start(i % 2 ? missing : ProcessSpec{});
  for (size_t got = 0; got < 8;) got += set.WaitAny(5000).size();
  EXPECT_EQ(OpenFdCount(), before);
}

TEST(Spawn, TheParentKeepsOnlyItsEndsNonBlocking) {
  int before = OpenFdCount();
  internal::SpawnedFds fds;
  pid_t pid = -1;
  ProcessSpec spec = True(true);
  ASSERT_EQ(internal::Spawn(spec, &fds, &pid), "");
  EXPECT_EQ(OpenFdCount(), before + 3) << "stdout, stderr and the channel: nothing else";
  for (const UniqueFd* fd : {&fds.out, &fds.err, &fds.chan}) {
    ASSERT_TRUE(fd->valid());
    EXPECT_TRUE(::fcntl(fd->get(), F_GETFL) & O_NONBLOCK);
    EXPECT_TRUE(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC);
  }
  ::waitpid(pid, nullptr, 0);
  fds = {};
  EXPECT_EQ(OpenFdCount(), before);
}

TEST(UniqueFd, ClosesOnceAndMovesOwnership) {
  int before = OpenFdCount();
  {
    UniqueFd a(::open("/dev/null", O_RDONLY));
    ASSERT_TRUE(a.valid());
    UniqueFd b = std::move(a);
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
    EXPECT_EQ(OpenFdCount(), before + 1);
    UniqueFd c(::open("/dev/null", O_RDONLY));
    c = std::move(b);  // c's own fd is closed, b's kept
    EXPECT_EQ(OpenFdCount(), before + 1);
    int raw = c.Release();
    EXPECT_FALSE(c.valid());
    EXPECT_EQ(OpenFdCount(), before + 1) << "released, not closed";
    ::close(raw);
    UniqueFd failed(-1);  // a failed open() holds nothing
    EXPECT_FALSE(failed.valid());
  }
  EXPECT_EQ(OpenFdCount(), before);
}

}  // namespace
}  // namespace kz::util
