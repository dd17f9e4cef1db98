#include "worker/bytecode.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "util/hash.h"
#include "util/log.h"

extern char** environ;

namespace kz::worker {
namespace fs = std::filesystem;

namespace {
constexpr int kStaleLockSeconds = 600;  // a warm that ran longer than this died

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// "3.12.3" -> "cpython-312", the tag in .pyc names.
std::string CacheTag(const std::string& python_version) {
  auto dot1 = python_version.find('.');
  auto dot2 = python_version.find('.', dot1 == std::string::npos ? 0 : dot1 + 1);
  if (dot1 == std::string::npos) return "";
  return "cpython-" + python_version.substr(0, dot1) +
         python_version.substr(dot1 + 1, dot2 == std::string::npos ? std::string::npos : dot2 - dot1 - 1);
}

// Takes MARKER.lock (O_EXCL); a lock older than kStaleLockSeconds is broken.
bool TakeLock(const std::string& lock) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return true;
    }
    struct stat st {};
    if (::stat(lock.c_str(), &st) != 0 || std::time(nullptr) - st.st_mtime < kStaleLockSeconds)
      return false;
    ::unlink(lock.c_str());
  }
  return false;
}

// Starts the warm process in its own session and does not wait for it (double fork: no
// zombie is left behind, and it outlives a short `kz verify`). Everything the child needs is
// built before fork(): between fork and exec it only calls async-signal-safe functions.
void StartWarm(const WorkerConfig& config) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("PYTHONDONTWRITEBYTECODE=", 0) && kv.rfind("PYTHONPATH=", 0) &&
        kv.rfind("PYTHONPYCACHEPREFIX=", 0))
      env.push_back(kv);
  }
  env.push_back("PYTHONPATH=" + config.package_dir);
  env.push_back("PYTHONPYCACHEPREFIX=" + config.bytecode_dir);
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {config.python, "-m", "kz_worker.warm_bytecode", config.bytecode_marker};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return;
  if (pid == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) ::dup2(null_fd, 0), ::dup2(null_fd, 1), ::dup2(null_fd, 2);
    ::close_range(3, ~0U, 0);  // no pipe or socket of kz's stays open in the long-lived warm
    ::execvpe(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
}
}  // namespace

void PrepareBytecode(WorkerConfig* config, const std::string& cache_dir) {
  if (const char* v = std::getenv("KZ_BYTECODE"); v && std::string(v) == "off") return;
  if (cache_dir.empty()) return;
  static std::mutex mu;
  static std::map<std::string, std::pair<std::string, std::string>> memo;  // key -> dir, marker
  std::string key = config->python + '\n' + config->package_dir + '\n' + cache_dir;
  std::lock_guard lock(mu);
  auto it = memo.find(key);
  if (it == memo.end()) {
    std::pair<std::string, std::string> found;
    if (auto env = ProbeEnvironment(*config)) {
      std::string version_file = TorchVersionFile(*config);
      std::string tag = CacheTag(env->value("python", ""));
      fs::path own = fs::path(version_file).parent_path() / "__pycache__" / ("version." + tag + ".pyc");
      if (!version_file.empty() && !tag.empty() && !Exists(own.string())) {
        std::string id = util::LabelledHasher()
                             .Add("format", "kz-bytecode-1")
                             .Add("python", config->python)
                             .Add("package", config->package_dir)
                             .Add("torch", env->value("torch", ""))
                             .HexDigest();
        found = {cache_dir + "/pycache", cache_dir + "/pycache/warm-" + id.substr(0, 16)};
      }
    }
    it = memo.emplace(key, found).first;
  }
  config->bytecode_dir = it->second.first;
  config->bytecode_marker = it->second.second;
  if (config->bytecode_dir.empty() || Exists(config->bytecode_marker)) return;
  std::error_code ec;
  fs::create_directories(config->bytecode_dir, ec);
  if (ec || !TakeLock(config->bytecode_marker + ".lock")) return;
  util::LogInfo("no bytecode beside torch's sources: filling " + config->bytecode_dir +
                " in the background (children use it once it is complete)");
  StartWarm(*config);
}

bool BytecodeReady(const WorkerConfig& config) {
  return !config.bytecode_dir.empty() && Exists(config.bytecode_marker);
}

}  // namespace kz::worker
