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

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// A pipe (close-on-exec) into *r and *w; "" or why not.
std::string OpenPipe(UniqueFd* r, UniqueFd* w) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe");
  r->Reset(fds[0]);
  w->Reset(fds[1]);
  return "";
}

// The fds of one spawn: both ends of each pipe, the channel's socketpair and /dev/null.
// Whatever is still held when a Pipes goes is closed: every error path closes what it opened.
struct Pipes {
  UniqueFd out_r, out_w, err_r, err_w, chan_parent, chan_child, devnull;
  UniqueFd sync_r, sync_w;  // a jailed child waits on sync_r until its id maps are written

  std::string Open(bool channel) {
    if (std::string e = OpenPipe(&out_r, &out_w); !e.empty()) return e;
    if (std::string e = OpenPipe(&err_r, &err_w); !e.empty()) return e;
    if (channel) {
      int sv[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return Errno("socketpair");
      chan_parent.Reset(sv[0]);
      chan_child.Reset(sv[1]);
    }
    devnull.Reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    return devnull.valid() ? "" : Errno("open /dev/null");
  }
  void CloseChildEnds() {
    for (UniqueFd* fd : {&devnull, &out_w, &err_w, &chan_child, &sync_r}) fd->Reset();
  }
};

// In the child after fork/clone: its standard fds, the protocol channel, its jail, exec.
[[noreturn]] void ExecChild(const ProcessSpec& spec, const Pipes& p, char** argv, char** envp) {
  ::setpgid(0, 0);
  int chan_w = p.chan_child.get();
  bool stdio = spec.stdio_channel && chan_w >= 0;
  ::dup2(stdio ? chan_w : p.devnull.get(), 0);
  ::dup2(stdio ? chan_w : p.out_w.get(), 1);
  ::dup2(p.err_w.get(), 2);
  if (chan_w >= 0 && !stdio) {
    if (chan_w == 3)
      ::fcntl(3, F_SETFD, 0);
    else
      ::dup2(chan_w, 3);
  }
  if (p.sync_r.valid()) {  // the parent writes our uid/gid maps first, then one byte
    // A byte, not EOF: a child cloned meanwhile by another thread holds a copy of the write
    // end until it execs, and two such children would wait for each other.
    char b = 0;
    ssize_t n;
    while ((n = ::read(p.sync_r.get(), &b, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) _exit(util::kSandboxExit);  // the parent gave up on us
    ::close(p.sync_r.get());
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
    if (pid < 0) *err = Errno("fork");
    return pid;
  }
  if (std::string e = spec.jail->Error(); !e.empty()) {
    *err = "sandbox: " + e;
    return -1;
  }
  if (*err = OpenPipe(&p->sync_r, &p->sync_w); !err->empty()) return -1;
  // A raw clone with no stack argument behaves as fork() (the child continues on a copy).
  long pid = ::syscall(SYS_clone, spec.jail->CloneFlags() | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) *err = Errno("clone (sandbox namespaces)");
  return static_cast<pid_t>(pid);
}

// In the parent: a jailed child gets its id maps, then the byte that lets it go on. On
// failure the child is killed and collected.
std::string ReleaseJailedChild(const ProcessSpec& spec, pid_t pid, int sync_w) {
  std::string err = spec.jail->AfterClone(pid);
  if (err.empty() && ::write(sync_w, "g", 1) != 1) err = Errno("sandbox sync");
  if (!err.empty()) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
  return err;
}
}  // namespace

std::string Spawn(const ProcessSpec& spec, SpawnedFds* fds, pid_t* pid) {
  if (spec.argv.empty()) return "empty argv";
  Pipes p;
  if (std::string err = p.Open(spec.channel); !err.empty()) return err;
  std::vector<std::string> env = BuildEnv(spec);
  std::vector<char*> envp = CStrings(env);
  std::vector<std::string> argv_s = spec.argv;
  std::vector<char*> argv = CStrings(argv_s);
  std::string err;
  pid_t child = ForkOrClone(spec, &p, &err);
  if (child == 0) {
    if (p.sync_w.valid()) ::close(p.sync_w.get());
    ExecChild(spec, p, argv.data(), envp.data());
  }
  p.CloseChildEnds();
  if (child > 0) ::setpgid(child, child);
  if (child > 0 && spec.jail) err = ReleaseJailedChild(spec, child, p.sync_w.get());
  p.sync_w.Reset();                                                  // the child goes on (or sees EOF after its kill)
  if (child < 0 || !err.empty()) return err;                         // p closes the parent's ends
  if (spec.stdio_channel && p.chan_parent.valid()) p.out_r.Reset();  // stdout is the channel
  fds->out = std::move(p.out_r);
  fds->err = std::move(p.err_r);
  fds->chan = std::move(p.chan_parent);
  for (const UniqueFd* fd : {&fds->out, &fds->err, &fds->chan})
    if (fd->valid()) ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  *pid = child;
  return "";
}

}  // namespace kz::util::internal
