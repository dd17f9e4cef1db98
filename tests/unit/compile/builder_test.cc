// The build batch against a stand-in worker whose "build" writes <name>.so, fails, or times
// out depending on the call's sources: the scripted worker (worker/call_set.h, no process)
// for the batch's logic; a real Python child where the test is about processes — compilers
// in process groups of their own, memory, kills mid-write, several farm processes.
#include "compile/builder.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "compile/build_procs.h"
#include "fake_worker.h"
#include "pid_wait.h"
#include "scripted_worker.h"
#include "util/key_lock.h"

namespace kz::compile {
namespace {
// The real child (tests about processes): notes its pid and those of its "compilers".
const char* kFakeBuild = R"(
import signal, subprocess, sys, time
call = req['call']
src = call['cuda_sources'][0]
root = os.path.dirname(os.path.dirname(req['build_dir']))  # <cache>/tmp/build-XXXX
def note_pid(pid):
    with open(os.path.join(root, 'pids'), 'a') as f:
        f.write('%d\n' % pid)
note_pid(os.getpid())
with open(os.path.join(req['build_dir'], 'builds.log'), 'a') as f:
    f.write(call['name'] + '\n')
def fail(message):
    send({'type': 'result', 'ok': False, 'error': {'kind': 'compile_error', 'message': message}})
    sys.exit(0)
if src == 'orphan_hang':  # a compiler in a process group of its own, as ninja starts them
    note_pid(subprocess.Popen(['sleep', '300'], start_new_session=True).pid)
    time.sleep(60)
if src == 'orphan_oom':  # a compiler in its own group that allocates until it is killed
    hog = subprocess.Popen([sys.executable, '-c', 'import time\nb = []\n'
                            'for i in range(32): b.append(b"x" * (64 << 20)); time.sleep(0.01)\n'
                            'time.sleep(60)'], start_new_session=True)
    note_pid(hog.pid)
    hog.wait()
    fail('Error building extension: c++: fatal error: Killed signal terminated program cc1plus')
lib = os.path.join(req['build_dir'], call['name'] + '.so')
with open(lib, 'w') as f:
    if src == 'slow':  # a library written over ~0.3 s, for kills mid-write
        for i in range(60):
            f.write('chunk %02d ' % i + 'x' * 65536 + '\n')
            f.flush()
            time.sleep(0.005)
        f.write('END')
    else:
        f.write('library of ' + src)
send({'type': 'result', 'ok': True, 'library': lib, 'seconds': 0.1})
)";
// The scripted child (tests of the batch's logic): what a build of these sources answers.
testing_support::Script ScriptedBuild(const worker::WorkerCall& wc) {
  using testing_support::Script;
  const nlohmann::json& call = wc.request["call"];
  std::string src = call["cuda_sources"][0], dir = wc.request["build_dir"], err;
  util::WriteFileAtomic(dir + "/builds.log", call.value("name", "") + "\n", &err);
  auto fail = [](const std::string& message) {
    return Script().Result({{"ok", false}, {"error", {{"kind", "compile_error"}, {"message", message}}}});
  };
  if (src == "hang") return Script().End(util::ProcessEnd::kTimedOut);  // the process layer's timeout
  if (src.rfind("broken", 0) == 0) return fail("/b/cuda.cu(5): error: identifier \"y\" is undefined");
  if (src == "nospace")
    return fail(
        "Error building extension 'x': [1/2] c++ -MMD -c main.cpp -o main.o\nFAILED: main.o\n"
        "c++ -MMD -c main.cpp -o main.o\n/b/main.cpp:9: fatal error: error writing to /tmp/cc.s: No space left on "
        "device\n");
  if (src == "oom_killed")
    return fail(
        "Error building extension 'x': [1/2] c++ -MMD -c main.cpp -o main.o\n"
        "c++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n");
  if (src == "silent")
    return fail(
        "Error building extension 'x': [1/3] c++ -MMD -c main.cpp -o main.o\nFAILED: cuda.cuda.o \n"
        "/usr/local/cuda/bin/nvcc -c cuda.cu -o cuda.cuda.o\nninja: build stopped: subcommand failed.\n");
  std::string lib = dir + "/" + call.value("name", "") + ".so";
  util::WriteFileAtomic(lib, "library of " + src, &err);
  return Script().Result({{"ok", true}, {"library", lib}, {"seconds", 0.1}});
}

nlohmann::json Call(const std::string& name, const std::string& src) {
  return {{"name", name}, {"cuda_sources", {src}}, {"digest", "d-" + name + src}};
}

std::vector<pid_t> NotedPids(const std::string& root) {
  std::vector<pid_t> pids;
  std::ifstream in(root + "/pids");
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

bool AllGone(const std::vector<pid_t>& pids, double within_s) {
  bool all = true;
  for (pid_t p : pids) all = testing_support::ProcessEnds(p, static_cast<int>(within_s * 1000)) && all;
  return all;
}

class BuilderTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    root_ = util::MakeTempDir(testing::TempDir(), "builder-", &err);
    worker_ = testing_support::FakeWorker(kFakeBuild);
    scripted_ = std::make_shared<testing_support::ScriptedLauncher>(ScriptedBuild);
    options_.jobs = 4;
    options_.timeout_s = 2;
    options_.env = {"2.11.0", "13.0", "3.12", "9.0"};
  }
  void TearDown() override {
    for (pid_t p : NotedPids(root_)) ::kill(p, SIGKILL);  // nothing may outlive a test
    util::RemoveAll(root_);
  }
  // A batch of the scripted worker.
  std::vector<BuildResult> Build(const std::vector<nlohmann::json>& calls, const ExtensionCache& cache,
                                 const BuildProgress& progress = nullptr) {
    return BuildExtensions(calls, cache, testing_support::ScriptedWorkerConfig(), options_, progress, scripted_);
  }
  size_t ScriptedBuilds() const { return scripted_->Calls().size(); }

  std::string root_;
  worker::WorkerConfig worker_;  // the real child
  std::shared_ptr<testing_support::ScriptedLauncher> scripted_;
  BuilderOptions options_;
};
}  // namespace

TEST_F(BuilderTest, BuildsCachesAndDeduplicates) {
  ExtensionCache cache(root_);
  std::vector<nlohmann::json> calls = {Call("a", "x"), Call("b", "y"), Call("a", "x")};
  size_t reported = 0;
  auto r = Build(calls, cache, [&](const BuildResult&, size_t, size_t) { ++reported; });
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(reported, 3u);
  for (const auto& b : r) EXPECT_TRUE(b.ok) << b.diagnostics;
  EXPECT_FALSE(r[0].cache_hit);
  EXPECT_EQ(r[0].library, r[2].library) << "identical calls share one build";
  std::string content, err;
  ASSERT_TRUE(util::ReadFile(r[1].library, &content, &err));
  EXPECT_EQ(content, "library of y");
  EXPECT_EQ(ScriptedBuilds(), 2u) << "one build per key";
  auto again = Build(calls, cache);
  for (const auto& b : again) EXPECT_TRUE(b.cache_hit && b.ok);
  EXPECT_EQ(ScriptedBuilds(), 2u) << "cache hits start no build";
}

TEST_F(BuilderTest, CompileErrorsAreTrimmedAndCached) {
  ExtensionCache cache(root_);
  auto r = Build({Call("bad", "broken")}, cache);
  ASSERT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].error_kind, "compile_error");
  EXPECT_NE(r[0].diagnostics.find("identifier \"y\" is undefined"), std::string::npos);
  auto again = Build({Call("bad", "broken")}, cache);
  EXPECT_TRUE(again[0].cache_hit);
  EXPECT_FALSE(again[0].ok);
  EXPECT_EQ(again[0].diagnostics, r[0].diagnostics);
}

TEST_F(BuilderTest, HangingBuildTimesOutAndOthersStillBuild) {
  ExtensionCache cache(root_);
  auto r = Build({Call("slow", "hang"), Call("fine", "z")}, cache);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].error_kind, "timeout");
  EXPECT_EQ(scripted_->Calls().at(0).call.wall_limit_s, options_.timeout_s) << "the build's limit is the option";
  EXPECT_TRUE(r[1].ok);
  EXPECT_FALSE(cache.Lookup(r[0].key, "slow")) << "a timed-out build is not cached";
}

TEST_F(BuilderTest, UnwritableCacheIsReportedPerCall) {
  ExtensionCache cache("/proc/kz-no-cache");
  auto r = Build({Call("a", "x")}, cache);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].error_kind, "cache");
}

TEST_F(BuilderTest, DiagnosticsAreMappedToEachCallersOwnCandidate) {
  ExtensionCache cache(root_);
  // One key (same sources), two candidate files with the literal on different lines.
  auto a = Call("bad", "broken\nx\ny"), b = Call("bad", "broken\nx\ny");
  a["candidate_file"] = "a.py", a["source_lines"] = {{"cuda_sources", {10}}};
  b["candidate_file"] = "b.py", b["source_lines"] = {{"cuda_sources", {20}}};
  auto r = Build({a, b}, cache);
  ASSERT_EQ(r[0].key, r[1].key);
  // cuda.cu line 5 = line 2 of cuda_sources[0] (load_inline prepends three #include lines).
  EXPECT_EQ(r[0].diagnostics.rfind("a.py:11 (cuda_sources line 2): error: identifier \"y\" is undefined\n", 0), 0u)
      << r[0].diagnostics;
  EXPECT_EQ(r[1].diagnostics.rfind("b.py:21 (cuda_sources line 2): error: identifier \"y\" is undefined\n", 0), 0u)
      << r[1].diagnostics;
  EXPECT_NE(r[0].diagnostics.find("/b/cuda.cu(5): error"), std::string::npos) << "the original line is kept";
  auto entry = cache.Lookup(r[0].key, "bad");
  ASSERT_TRUE(entry && !entry->ok);
  EXPECT_EQ(entry->diagnostics.find("a.py"), std::string::npos) << "the cache holds the unmapped output";
  auto again = Build({b}, cache);
  EXPECT_TRUE(again[0].cache_hit);
  EXPECT_EQ(again[0].diagnostics, r[1].diagnostics) << "a cached failure is mapped for its caller";
}

TEST_F(BuilderTest, TimeoutAlsoKillsCompilersInTheirOwnProcessGroups) {
  ExtensionCache cache(root_);
  auto r = BuildExtensions({Call("slow", "orphan_hang")}, cache, worker_, options_);
  EXPECT_EQ(r[0].error_kind, "timeout");
  auto pids = NotedPids(root_);
  ASSERT_EQ(pids.size(), 2u) << "the worker and its 'compiler'";
  EXPECT_TRUE(AllGone(pids, 2.0)) << "a compiler outside the worker's group outlived the timeout";
}

TEST_F(BuilderTest, MemoryOfCompilersInTheirOwnGroupsCountsAgainstTheLimit) {
  ExtensionCache cache(root_);
  options_.max_rss_bytes = 256u << 20;
  options_.timeout_s = 20;
  auto t0 = std::chrono::steady_clock::now();
  auto r = BuildExtensions({Call("hog", "orphan_oom")}, cache, worker_, options_);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].error_kind, "memory_limit") << r[0].diagnostics;
  EXPECT_NE(r[0].diagnostics.find("host-memory limit of 256 MiB"), std::string::npos) << r[0].diagnostics;
  EXPECT_TRUE(AllGone(NotedPids(root_), 2.0));
  EXPECT_FALSE(cache.Lookup(r[0].key, "hog")) << "a build killed for memory is not cached";
}

TEST_F(BuilderTest, FailuresOfTheMachineNotTheSourcesAreNotCached) {
  ExtensionCache cache(root_);
  auto r = Build({Call("a", "nospace"), Call("b", "oom_killed"), Call("c", "silent")}, cache);
  EXPECT_EQ(r[0].error_kind, "cache");
  EXPECT_NE(r[0].diagnostics.find("no space left on device"), std::string::npos) << r[0].diagnostics;
  EXPECT_EQ(r[1].error_kind, "memory_limit");
  EXPECT_NE(r[1].diagnostics.find("out-of-memory killer"), std::string::npos) << r[1].diagnostics;
  EXPECT_EQ(r[2].error_kind, "crash");
  for (const auto& b : r) {
    EXPECT_FALSE(b.ok);
    EXPECT_NE(b.diagnostics.find("not cached"), std::string::npos) << b.diagnostics;
    EXPECT_FALSE(cache.Lookup(b.key, b.name)) << b.name;
  }
}

TEST_F(BuilderTest, CachedCompileErrorIsItsMetaAlone) {
  ExtensionCache cache(root_);
  auto r = Build({Call("bad", "broken")}, cache);
  ASSERT_EQ(r[0].error_kind, "compile_error");
  std::string dir = root_ + "/v1/" + r[0].key.substr(0, 2) + "/" + r[0].key;
  EXPECT_TRUE(util::PathExists(dir + "/meta.json"));
  EXPECT_FALSE(util::PathExists(dir + "/builds.log")) << "build leftovers are not kept in an error entry";
}

namespace {
// Every published entry is whole: meta.json parses and an ok entry's library is complete.
void ExpectNoTornEntry(const std::string& root, const std::string& key) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root + "/v1", ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() != "meta.json") continue;
    std::string text, err;
    ASSERT_TRUE(util::ReadFile(it->path().string(), &text, &err));
    auto meta = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(meta.is_discarded()) << "torn meta.json: " << text;
  }
  ExtensionCache cache(root);
  if (auto e = cache.Lookup(key, "big")) {
    ASSERT_TRUE(e->ok);
    std::string lib, err;
    ASSERT_TRUE(util::ReadFile(e->library, &lib, &err)) << err;
    EXPECT_EQ(lib.size(), 60u * (9 + 65536 + 1) + 3) << "a published library must be whole";
    EXPECT_EQ(lib.substr(lib.size() - 3), "END");
  }
}
}  // namespace

TEST_F(BuilderTest, KillingTheFarmMidWriteNeverLeavesATornEntry) {
  ExtensionCache cache(root_);
  std::string key = ExtensionCache::Key(Call("big", "slow"), options_.env);
  // A farm process killed at many points: before its worker starts, while the library is
  // being written, while it is published. The cache must hold a whole entry or none.
  for (int delay_ms : {0, 30, 60, 90, 120, 160, 200, 250, 300, 350, 400, 500}) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      BuildExtensions({Call("big", "slow")}, cache, worker_, options_);
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    // Its orphaned worker may still be writing into its staging directory.
    for (pid_t p : NotedPids(root_)) ::kill(p, SIGKILL);
    ExpectNoTornEntry(root_, key);
  }
  auto r = BuildExtensions({Call("big", "slow")}, cache, worker_, options_);
  ASSERT_TRUE(r[0].ok) << r[0].diagnostics;
  ExpectNoTornEntry(root_, key);
  ASSERT_TRUE(cache.Lookup(key, "big"));
  auto swept = cache.Evict(1ull << 40, 0);  // staging dirs of the killed builds
  EXPECT_TRUE(std::filesystem::is_empty(root_ + "/tmp"));
  EXPECT_TRUE(cache.Lookup(key, "big")) << "sweeping staging dirs keeps entries";
  (void)swept;
}

TEST_F(BuilderTest, ConcurrentProcessesBuildingOneKeyShareOneWholeEntry) {
  ExtensionCache cache(root_);
  std::vector<pid_t> children;
  for (int i = 0; i < 3; ++i) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto r = BuildExtensions({Call("big", "slow")}, cache, worker_, options_);
      std::string err;
      util::WriteFileAtomic(root_ + "/result-" + std::to_string(i), r[0].ok ? r[0].library : "FAILED " + r[0].diagnostics, &err);
      ::_exit(r[0].ok ? 0 : 1);
    }
    children.push_back(child);
  }
  for (pid_t c : children) {
    int status = 0;
    ::waitpid(c, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string key = ExtensionCache::Key(Call("big", "slow"), options_.env);
  std::string first, err;
  for (int i = 0; i < 3; ++i) {
    std::string lib;
    ASSERT_TRUE(util::ReadFile(root_ + "/result-" + std::to_string(i), &lib, &err));
    if (i == 0) first = lib;
    EXPECT_EQ(lib, first) << "every process gets the one published entry";
  }
  ExpectNoTornEntry(root_, key);
  EXPECT_EQ(NotedPids(root_).size(), 1u) << "one build: the others waited on its key lock";
  std::error_code ec;
  size_t staging_left = 0;
  for (const auto& d : std::filesystem::directory_iterator(root_ + "/tmp", ec)) (void)d, ++staging_left;
  EXPECT_EQ(staging_left, 0u) << "losers remove their staging directories";
}

TEST_F(BuilderTest, ThreadsBuildingOneKeyShareOneBuild) {
  ExtensionCache cache(root_);
  std::vector<BuildResult> got(3);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] { got[i] = BuildExtensions({Call("big", "slow")}, cache, worker_, options_)[0]; });
  for (auto& t : threads) t.join();
  for (const auto& r : got) {
    EXPECT_TRUE(r.ok) << r.diagnostics;
    EXPECT_EQ(r.library, got[0].library);
  }
  EXPECT_EQ(NotedPids(root_).size(), 1u);
  int hits = 0;
  for (const auto& r : got) hits += r.cache_hit;
  EXPECT_EQ(hits, 2) << "the waiters got the published entry";
}

TEST_F(BuilderTest, AKeyWhoseBuilderFailedWithoutAnEntryIsBuiltByTheWaiter) {
  ExtensionCache cache(root_);
  bool busy = false;
  std::string key = ExtensionCache::Key(Call("k", "fine"), options_.env);
  auto held = util::KeyLock::TryAcquire(root_ + "/locks/" + key + ".lock", &busy);
  ASSERT_TRUE(held);
  std::thread releaser([&] {  // another builder that dies without publishing
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    held.reset();
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = Build({Call("k", "fine")}, cache);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  releaser.join();
  EXPECT_TRUE(r[0].ok) << r[0].diagnostics;
  EXPECT_FALSE(r[0].cache_hit);
  EXPECT_GE(waited, 0.35) << "it waited for the lock, then built";
  EXPECT_EQ(ScriptedBuilds(), 1u);
}

TEST_F(BuilderTest, ASuccessfulBuildReplacesACachedFailureOnPublish) {
  // Two farms raced on one key; one failed for a reason outside the sources and published
  // an error entry anyway (as older versions did). The successful one must not report an
  // empty library.
  ExtensionCache cache(root_);
  std::string key = ExtensionCache::Key(Call("a", "x"), options_.env);
  std::string err, lib;
  ASSERT_TRUE(cache.Publish(cache.NewStagingDir(&err), key, "a", {{"ok", false}, {"diagnostics", "Killed"}}, &lib, &err));
  std::string staging = cache.NewStagingDir(&err);
  ASSERT_TRUE(util::WriteFileAtomic(staging + "/a.so", "good", &err));
  ASSERT_TRUE(cache.Publish(staging, key, "a", {{"ok", true}}, &lib, &err)) << err;
  ASSERT_FALSE(lib.empty());
  auto entry = cache.Lookup(key, "a");
  ASSERT_TRUE(entry && entry->ok);
  EXPECT_EQ(entry->library, lib);
}

}  // namespace kz::compile
