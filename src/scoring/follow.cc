#include "scoring/follow.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "verify/status.h"

extern char** environ;

namespace kz::scoring {
namespace {

// The generator as a child sharing our stdout and stderr (its progress line shows).
pid_t Spawn(const std::vector<std::string>& argv, std::string* err) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (rc != 0) return *err = "cannot start " + argv[0] + ": " + std::strerror(rc), -1;
  return pid;
}

// The exit code of a finished child, or -1 while it runs.
int Reap(pid_t pid, bool block) {
  int status = 0;
  pid_t r;
  do r = waitpid(pid, &status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return -1;
  if (r < 0) return verify::kExitInternal;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What changes when the generator appends a line or renames the sorted file into place.
struct FileStamp {
  bool exists = false;
  off_t size = 0;
  ino_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp Stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_size, st.st_ino};
}
}  // namespace

int RunBenchFollowing(BenchOptions o, const FollowOptions& f, const worker::WorkerConfig& worker) {
  std::string err;
  pid_t child = Spawn(f.generator_argv, &err);
  if (child < 0) return std::cerr << "kz bench: " << err << "\n", verify::kExitInternal;
  o.generations = f.jsonl;
  FileStamp seen;
  int generator_rc = -1, rounds = 0;
  for (;;) {
    if (generator_rc < 0) generator_rc = Reap(child, false);
    FileStamp now = Stamp(f.jsonl);
    if (now.exists && now.size > 0 && !(now == seen)) {  // new samples: verify them now
      seen = now;
      ++rounds;
      int rc = RunBench(o, worker);
      if (rc == verify::kExitUsage || rc == verify::kExitInternal) {  // every round would fail so
        if (generator_rc < 0) ::kill(child, SIGINT), Reap(child, true);
        return rc;
      }
      continue;  // look again at once: more may have come while these were verified
    }
    if (generator_rc >= 0) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(f.poll_s));
  }
  std::cerr << "kz bench: the generator exited with " << generator_rc << " after " << rounds
            << " verification rounds; final round\n";
  if (!Stamp(f.jsonl).exists) {
    std::cerr << "kz bench: " << f.jsonl << " was not written; nothing to verify\n";
    return generator_rc ? generator_rc : verify::kExitUsage;
  }
  int rc = RunBench(o, worker);
  return rc != 0 ? rc : generator_rc;
}

}  // namespace kz::scoring
