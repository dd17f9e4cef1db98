#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sandbox/plan.h"
#include "util/fs.h"

namespace kz::sandbox {
namespace {
std::string WriteProcFile(pid_t pid, const char* name, const std::string& text) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return "open " + path + ": " + std::strerror(errno);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) return "write " + path + ": " + std::strerror(err);
  return "";
}

void ChownTree(const std::string& top, uid_t uid, gid_t gid) {
  namespace fs = std::filesystem;
  ::lchown(top.c_str(), uid, gid);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(top, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    ::lchown(it->path().c_str(), uid, gid);
}
}  // namespace

std::shared_ptr<Jail> Jail::Create(const Policy& policy) {
  std::shared_ptr<Jail> j(new Jail());
  j->policy_ = policy;
  std::string base = policy.stage_base.empty() ? std::filesystem::temp_directory_path().string() : policy.stage_base;
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  j->stage_ = util::MakeTempDir(base, "sandbox-", &j->error_);
  if (j->stage_.empty()) return j;
  j->root_ = j->stage_ + "/root";
  j->inputs_ = j->stage_ + "/in";
  for (const auto& d : {j->root_, j->inputs_})
    if (::mkdir(d.c_str(), 0755) != 0) {
      j->error_ = "mkdir " + d + ": " + std::strerror(errno);
      return j;
    }
  ::chmod(j->inputs_.c_str(), 0755);
  Plan plan = BuildPlan(policy, j->root_, j->inputs_);
  if (!plan.namespaces) {  // no private tmpfs: a host directory of its own
    plan.scratch = j->stage_ + "/scratch";
    for (const char* d : {"", "/tmp", "/home", "/torch_extensions", "/triton"})
      ::mkdir((plan.scratch + d).c_str(), 0700);
  }
  j->scratch_ = plan.scratch;
  if (plan.namespaces && plan.map_root) j->HandOver(plan);
  j->plan_ = std::make_shared<const Plan>(std::move(plan));
  return j;
}

// The child of a root supervisor runs as nobody: the directories it writes become its own.
void Jail::HandOver(const Plan& plan) {
  for (const auto& d : policy_.shared_writable) {  // for good, with what is already in them
    struct stat st {};
    if (::stat(d.c_str(), &st) == 0 && st.st_uid != plan.uid) ChownTree(d, plan.uid, plan.gid);
  }
  for (const auto& d : policy_.writable) {
    struct stat st {};
    if (::stat(d.c_str(), &st) != 0) continue;
    handed_.push_back({d, st.st_uid, st.st_gid});
    ::chown(d.c_str(), plan.uid, plan.gid);
  }
}

Jail::~Jail() {
  for (const auto& h : handed_) ChownTree(h.path, h.uid, h.gid);  // what the child wrote is ours again
  if (!stage_.empty()) util::RemoveAll(stage_);
}

unsigned long Jail::CloneFlags() const {
  const Plan& p = *plan_;
  if (!p.namespaces) return 0;
  unsigned long f = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS;
  if (p.pid) f |= CLONE_NEWPID;
  if (p.net) f |= CLONE_NEWNET;
  return f;
}

std::string Jail::AfterClone(pid_t child) const {
  const Plan& p = *plan_;
  if (!p.namespaces) return "";
  auto one = [](unsigned id) { return std::to_string(id) + " " + std::to_string(id) + " 1\n"; };
  // root: inside 0 is root during set-up (it owns the host paths it binds), then the child
  // drops to nobody; an unprivileged supervisor can map only itself.
  std::string uids = p.map_root ? "0 0 1\n" + one(p.uid) : one(p.uid);
  std::string gids = p.map_root ? "0 0 1\n" + one(p.gid) : one(p.gid);
  std::string err;
  if (!p.map_root) err = WriteProcFile(child, "setgroups", "deny");
  if (err.empty()) err = WriteProcFile(child, "uid_map", uids);
  if (err.empty()) err = WriteProcFile(child, "gid_map", gids);
  return err.empty() ? "" : "sandbox id maps: " + err;
}

std::string Jail::Stage(const std::string& host_path, std::string* err) {
  namespace fs = std::filesystem;
  // in/<n>/<name>: the file keeps its name inside (compiler diagnostics, tracebacks and
  // `__file__` name the candidate's file, not a renamed copy).
  std::string dir = inputs_ + "/" + std::to_string(++staged_);
  std::string dest = dir + "/" + fs::path(host_path).filename().string();
  struct stat st {};
  if (::stat(host_path.c_str(), &st) != 0) {
    *err = "stage " + host_path + ": " + std::strerror(errno);
    return "";
  }
  if (::mkdir(dir.c_str(), 0755) != 0 || ::chmod(dir.c_str(), 0755) != 0) {  // chmod: past the umask
    *err = "stage " + host_path + ": mkdir " + dir + ": " + std::strerror(errno);
    return "";
  }
  // A hard link only to a file anyone may read (a link shares the mode); else a copy.
  if ((st.st_mode & S_IROTH) && ::link(host_path.c_str(), dest.c_str()) == 0) return dest;
  std::error_code ec;
  fs::copy_file(host_path, dest, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    *err = "stage " + host_path + ": " + ec.message();
    return "";
  }
  ::chmod(dest.c_str(), 0644);
  return dest;
}

}  // namespace kz::sandbox
