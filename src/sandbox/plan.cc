#include "sandbox/plan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <map>
#include <set>

#include "sandbox/seccomp.h"

namespace kz::sandbox {
namespace fs = std::filesystem;
namespace {
constexpr const char* kScratch = "/scratch";
constexpr const char* kDevNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
constexpr uid_t kNobody = 65534;

bool Under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

struct Bind {
  bool dir = true, writable = false;
};

class Builder {
 public:
  explicit Builder(const std::string& root) : root_(root) {}
  void Expose(const std::string& path, bool writable) {
    std::vector<std::pair<std::string, std::string>> links;
    std::string real = FollowPath(path, &links);
    links_.insert(links.begin(), links.end());
    struct stat st {};
    if (real.empty() || ::stat(real.c_str(), &st) != 0) return;
    Bind& b = binds_[real];
    b.dir = S_ISDIR(st.st_mode);
    b.writable = b.writable || writable;
  }
  // Mount points and binds, parents first; a read-only path under another bind is already
  // visible through it (the same host tree), so only writable ones are mounted on top.
  void Emit(std::vector<Jail::Op>* ops) const {
    std::set<std::string> dirs;
    std::vector<std::pair<std::string, Bind>> keep;
    for (const auto& [path, b] : binds_) {
      bool covered = false;
      for (const auto& [other, ob] : binds_) covered = covered || (Under(path, other) && ob.dir);
      if (covered && !b.writable) continue;
      keep.emplace_back(path, b);
      if (!covered) AddParents(path, &dirs);
    }
    auto bound = [&](const std::string& p) {
      for (const auto& [other, ob] : binds_)
        if (Under(p, other) && ob.dir) return true;
      return false;
    };
    for (const auto& [link, contents] : links_)
      if (!bound(link)) AddParents(link, &dirs);
    for (const auto& d : dirs) ops->push_back({Jail::Op::kMkdir, root_ + d, "", false, true});
    for (const auto& [path, b] : keep) {
      ops->push_back({b.dir ? Jail::Op::kMkdir : Jail::Op::kTouch, root_ + path, "", false, true});
      ops->push_back({Jail::Op::kBind, root_ + path, path, !b.writable, false});
    }
    for (const auto& [link, contents] : links_)
      if (!bound(link)) ops->push_back({Jail::Op::kSymlink, root_ + link, contents, false, true});
  }

 private:
  static void AddParents(const std::string& path, std::set<std::string>* dirs) {
    for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
      dirs->insert(path.substr(0, at));
  }
  std::string root_;
  std::map<std::string, Bind> binds_;
  std::map<std::string, std::string> links_;
};

void AddSpecials(const Policy& p, const std::string& root, std::vector<Jail::Op>* ops) {
  using Op = Jail::Op;
  std::string scratch_opts = "mode=0700,size=" + std::to_string(p.limits.scratch_bytes);
  ops->push_back({Op::kMkdir, root + kScratch, "", false, false});
  ops->push_back({Op::kTmpfs, root + kScratch, scratch_opts, false, false, true});
  for (const char* d : {"/tmp", "/home", "/torch_extensions", "/triton"})
    ops->push_back({Op::kMkdir, root + kScratch + d, "", false, false, true});
  if (!p.triton_cache.empty() && ::access(p.triton_cache.c_str(), R_OK | X_OK) == 0) {
    std::string s = root + kScratch;
    for (const char* d : {"/triton-upper", "/triton-work"})
      ops->push_back({Op::kMkdir, s + d, "", false, false, true});
    // Optional: a kernel without overlayfs in user namespaces keeps the private empty cache.
    ops->push_back({Op::kOverlay, s + "/triton",
                    "lowerdir=" + p.triton_cache + ",upperdir=" + s + "/triton-upper,workdir=" + s + "/triton-work",
                    false, true});
  }
  ops->push_back({Op::kMkdir, root + "/tmp", "", false, false});
  ops->push_back({Op::kBind, root + "/tmp", root + kScratch + "/tmp", false, false});
  ops->push_back({Op::kMkdir, root + "/dev", "", false, false});
  ops->push_back({Op::kTmpfs, root + "/dev", "mode=0755,size=1m"});
  std::vector<std::string> nodes(std::begin(kDevNodes), std::end(kDevNodes));
  nodes.insert(nodes.end(), p.devices.begin(), p.devices.end());
  for (const auto& n : nodes) {
    if (::access(("/dev/" + n).c_str(), F_OK) != 0) continue;
    ops->push_back({Op::kTouch, root + "/dev/" + n, "", false, false});
    ops->push_back({Op::kBind, root + "/dev/" + n, "/dev/" + n, false, false});
  }
  ops->push_back({Op::kMkdir, root + "/dev/shm", "", false, false});
  ops->push_back({Op::kTmpfs, root + "/dev/shm", "mode=1777,size=" + std::to_string(p.limits.shm_bytes)});
  for (const auto& [link, to] : std::vector<std::pair<std::string, std::string>>{
           {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
           {"stderr", "/proc/self/fd/2"}})
    ops->push_back({Op::kSymlink, root + "/dev/" + link, to, false, true});
  ops->push_back({Op::kMkdir, root + "/proc", "", false, false});
  ops->push_back({Op::kProc, root + "/proc", ""});
  if (::access("/sys", F_OK) == 0) {
    ops->push_back({Op::kMkdir, root + "/sys", "", false, false});
    ops->push_back({Op::kBind, root + "/sys", "/sys", true, false});
  }
}
}  // namespace

std::string FollowPath(const std::string& path, std::vector<std::pair<std::string, std::string>>* links) {
  std::string todo = fs::path(path).lexically_normal().string();
  for (int hops = 0; hops < 32; ++hops) {
    std::string cur;
    size_t i = 1;
    bool followed = false;
    while (i <= todo.size() && !followed) {
      size_t j = todo.find('/', i);
      if (j == std::string::npos) j = todo.size();
      if (j == i) {  // "//" or a trailing '/'
        i = j + 1;
        continue;
      }
      std::string next = cur + "/" + todo.substr(i, j - i);
      struct stat st {};
      if (::lstat(next.c_str(), &st) != 0) return "";
      if (S_ISLNK(st.st_mode)) {
        char buf[PATH_MAX];
        ssize_t n = ::readlink(next.c_str(), buf, sizeof buf - 1);
        if (n <= 0) return "";
        std::string to(buf, static_cast<size_t>(n));
        links->emplace_back(next, to);
        fs::path abs = to[0] == '/' ? fs::path(to) : fs::path(cur.empty() ? "/" : cur) / to;
        todo = (abs.lexically_normal().string() + todo.substr(j));
        todo = fs::path(todo).lexically_normal().string();
        followed = true;
        continue;
      }
      cur = next;
      i = j + 1;
    }
    if (!followed) return cur.empty() ? "/" : cur;
  }
  return "";  // a symlink loop
}

Jail::Plan BuildPlan(const Policy& policy, const std::string& root, const std::string& inputs) {
  Jail::Plan plan;
  plan.root = root;
  plan.map_root = ::geteuid() == 0;
  plan.uid = plan.map_root ? kNobody : ::geteuid();
  plan.gid = plan.map_root ? kNobody : ::getegid();
  plan.namespaces = policy.features.namespaces;
  plan.pid = policy.features.pid;
  plan.net = policy.features.net;
  plan.seccomp = policy.features.seccomp;
  plan.limits = policy.limits;
  plan.scratch = kScratch;
  if (plan.seccomp) plan.filter = SeccompProgram();
  if (!plan.namespaces) return plan;  // limits and seccomp only (best-effort on a host without them)
  plan.ops.push_back({Jail::Op::kTmpfs, root, "mode=0755,size=4m"});
  AddSpecials(policy, root, &plan.ops);
  Builder b(root);
  for (const auto& p : SystemPaths()) b.Expose(p, false);
  for (const auto& p : policy.read_only) b.Expose(p, false);
  b.Expose(inputs, false);
  for (const auto& p : policy.writable) b.Expose(p, true);
  for (const auto& p : policy.shared_writable) b.Expose(p, true);
  b.Emit(&plan.ops);
  // Secrets of /etc stay hidden even though /etc is visible.
  for (const char* secret : {"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"})
    if (::access(secret, F_OK) == 0) plan.ops.push_back({Jail::Op::kBind, root + secret, "/dev/null", true, true});
  return plan;
}

std::vector<std::string> SystemPaths() {
  std::vector<std::string> out;
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"})
    if (::access(p, F_OK) == 0) out.push_back(p);
  return out;
}

}  // namespace kz::sandbox
