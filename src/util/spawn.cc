#include "util/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

extern char** environ;

namespace kz::util::internal {
namespace {

std::vector<std::string> BuildEnv(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& k : spec.unset_env) env.erase(k);
  for (const auto& [k, v] : spec.env) env[k] = v;
  // A std::string, not "3": GCC 12 warns falsely (-Wrestrict) on operator=(const char*) here.
  if (spec.channel && !spec.stdio_channel) env["KZ_PROTOCOL_FD"] = std::string("3");
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The fds of one spawn: both ends of each pipe, the channel's socketpair and /dev/null.
struct Pipes {
  int out[2] = {-1, -1}, err[2] = {-1, -1}, chan[2] = {-1, -1};
  int devnull = -1;
  int sync_r = -1, sync_w = -1;  // a jailed child waits on sync_r until its id maps are written

  std::string Open(bool channel) {
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      return std::string("pipe: ") + std::strerror(errno);
    if (channel && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, chan) != 0)
      return std::string("socketpair: ") + std::strerror(errno);
    devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return "";
  }
  void CloseChildEnds() {
    for (int* fd : {&devnull, &out[1], &err[1], &chan[1], &sync_r}) Close(fd);
  }
  void CloseAll() {
    CloseChildEnds();
    for (int* fd : {&out[0], &err[0], &chan[0], &sync_w}) Close(fd);
  }
  static void Close(int* fd) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
};

// In the child after fork/clone: its standard fds, the protocol channel, its jail, exec.
[[noreturn]] void ExecChild(const ProcessSpec& spec, const Pipes& p, char** argv, char** envp) {
  ::setpgid(0, 0);
  int chan_w = p.chan[1];
  bool stdio = spec.stdio_channel && chan_w >= 0;
  ::dup2(stdio ? chan_w : p.devnull, 0);
  ::dup2(stdio ? chan_w : p.out[1], 1);
  ::dup2(p.err[1], 2);
  if (chan_w >= 0 && !stdio) {
    if (chan_w == 3) ::fcntl(3, F_SETFD, 0);
    else ::dup2(chan_w, 3);
  }
  if (p.sync_r >= 0) {  // the parent writes our uid/gid maps first, then one byte
    // A byte, not EOF: a child cloned meanwhile by another thread holds a copy of the write
    // end until it execs, and two such children would wait for each other.
    char b = 0;
    ssize_t n;
    while ((n = ::read(p.sync_r, &b, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) _exit(util::kSandboxExit);  // the parent gave up on us
    ::close(p.sync_r);
  }
  if (spec.nice > 0) errno = 0, (void)::nice(spec.nice);  // best effort
  if (spec.idle_class) {
    sched_param none{};
    (void)::sched_setscheduler(0, SCHED_IDLE, &none);  // best effort
  }
  if (spec.jail) spec.jail->Enter();  // _exits on failure
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0 && !spec.jail) _exit(126);
  ::execvpe(argv[0], argv, envp);
  const char* msg = "kz: exec failed\n";
  ssize_t rc = ::write(2, msg, std::strlen(msg));
  (void)rc;
  _exit(127);
}

// fork(), or clone() into the jail's namespaces with a pipe the child waits on until the
// parent has written its id maps. Returns the pid, or -1 with *err set.
pid_t ForkOrClone(const ProcessSpec& spec, Pipes* p, std::string* err) {
  if (!spec.jail) {
    pid_t pid = ::fork();
    if (pid < 0) *err = std::string("fork: ") + std::strerror(errno);
    return pid;
  }
  if (std::string e = spec.jail->Error(); !e.empty()) {
    *err = "sandbox: " + e;
    return -1;
  }
  int sp[2];
  if (::pipe2(sp, O_CLOEXEC) != 0) {
    *err = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  p->sync_r = sp[0];
  p->sync_w = sp[1];
  // A raw clone with no stack argument behaves as fork() (the child continues on a copy).
  long pid = ::syscall(SYS_clone, spec.jail->CloneFlags() | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) *err = std::string("clone (sandbox namespaces): ") + std::strerror(errno);
  return static_cast<pid_t>(pid);
}

// In the parent: a jailed child gets its id maps, then the byte that lets it go on. On
// failure the child is killed and collected.
std::string ReleaseJailedChild(const ProcessSpec& spec, pid_t pid, int sync_w) {
  std::string err = spec.jail->AfterClone(pid);
  if (err.empty() && ::write(sync_w, "g", 1) != 1)
    err = std::string("sandbox sync: ") + std::strerror(errno);
  if (!err.empty()) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
  return err;
}
}  // namespace

std::string Spawn(const ProcessSpec& spec, SpawnedFds* fds, pid_t* pid) {
  if (spec.argv.empty()) return "empty argv";
  Pipes p;
  if (std::string err = p.Open(spec.channel); !err.empty()) {
    p.CloseAll();
    return err;
  }
  std::vector<std::string> env = BuildEnv(spec);
  std::vector<char*> envp = CStrings(env);
  std::vector<std::string> argv_s = spec.argv;
  std::vector<char*> argv = CStrings(argv_s);
  std::string err;
  pid_t child = ForkOrClone(spec, &p, &err);
  if (child == 0) {
    if (p.sync_w >= 0) ::close(p.sync_w);
    ExecChild(spec, p, argv.data(), envp.data());
  }
  p.CloseChildEnds();
  if (child > 0) ::setpgid(child, child);
  if (child > 0 && spec.jail) err = ReleaseJailedChild(spec, child, p.sync_w);
  Pipes::Close(&p.sync_w);  // the child goes on (or sees EOF after its kill)
  if (child < 0 || !err.empty()) {
    p.CloseAll();
    return err;
  }
  if (spec.stdio_channel && p.chan[0] >= 0) Pipes::Close(&p.out[0]);  // stdout is the channel
  fds->out = p.out[0];
  fds->err = p.err[0];
  fds->chan = p.chan[0];
  for (int fd : {fds->out, fds->err, fds->chan})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  *pid = child;
  return "";
}

}  // namespace kz::util::internal
