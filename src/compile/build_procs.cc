#include "compile/build_procs.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <string_view>
#include <thread>

namespace kz::compile {
namespace {
constexpr uid_t kSandboxNobody = 65534;

// The value of KZ_BUILD_ID in /proc/<pid>/environ, or "".
std::string MarkerOf(int proc_dir, const char* pid) {
  std::string path = std::string(pid) + "/environ";
  int fd = ::openat(proc_dir, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string env;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && env.size() < (4u << 20);) env.append(buf, n);
  ::close(fd);
  std::string key = std::string(kBuildMarkerVar) + "=";
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    std::string_view kv(env.data() + at, end - at);
    if (kv.substr(0, key.size()) == key) return std::string(kv.substr(key.size()));
    at = end + 1;
  }
  return "";
}

uint64_t ResidentBytes(int proc_dir, const char* pid) {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::string path = std::string(pid) + "/statm";
  int fd = ::openat(proc_dir, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return resident * page;
}
}  // namespace

std::map<std::string, BuildProcesses> FindBuildProcesses() {
  std::map<std::string, BuildProcesses> out;
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  int proc_dir = ::dirfd(dir);
  uid_t me = ::geteuid();
  pid_t self = ::getpid();
  while (dirent* e = ::readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    struct stat st;
    // A sandboxed build of a root supervisor runs as nobody (docs/sandbox.md).
    if (::fstatat(proc_dir, e->d_name, &st, 0) != 0) continue;
    if (st.st_uid != me && !(me == 0 && st.st_uid == kSandboxNobody)) continue;
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid == self) continue;
    std::string id = MarkerOf(proc_dir, e->d_name);
    if (id.empty()) continue;
    auto& b = out[id];
    b.pids.push_back(pid);
    b.rss_bytes += ResidentBytes(proc_dir, e->d_name);
  }
  ::closedir(dir);
  return out;
}

int KillBuildProcesses(const std::string& id) {
  if (id.empty()) return 0;
  std::set<pid_t> killed;
  for (int round = 0; round < 50; ++round) {
    auto all = FindBuildProcesses();
    auto it = all.find(id);
    if (it == all.end()) break;
    for (pid_t pid : it->second.pids)
      if (::kill(pid, SIGKILL) == 0) killed.insert(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(round < 5 ? 2 : 20));
  }
  return static_cast<int>(killed.size());
}

}  // namespace kz::compile
