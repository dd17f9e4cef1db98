#include "util/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "util/proc_stats.h"

extern char** environ;

namespace kz::util {
namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPipeGrace = std::chrono::seconds(1);  // pipes held by escaped grandchildren
constexpr auto kRssScanEvery = std::chrono::milliseconds(200);

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

void AppendTail(std::string* buf, const char* data, size_t n, size_t keep) {
  buf->append(data, n);
  if (buf->size() > 2 * keep + 65536) buf->erase(0, buf->size() - keep);
}

std::vector<std::string> BuildEnv(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& k : spec.unset_env) env.erase(k);
  for (const auto& [k, v] : spec.env) env[k] = v;
  if (spec.channel) env["KZ_PROTOCOL_FD"] = "3";
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
}  // namespace

const char* ProcessEndName(ProcessEnd end) {
  switch (end) {
    case ProcessEnd::kExited: return "exited";
    case ProcessEnd::kSignaled: return "signaled";
    case ProcessEnd::kTimedOut: return "timed_out";
    case ProcessEnd::kMemoryExceeded: return "memory_exceeded";
    case ProcessEnd::kSpawnFailed: return "spawn_failed";
  }
  return "?";
}

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

struct ProcessSet::Child {
  Id id = 0;
  ProcessSpec spec;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1, chan_fd = -1, pid_fd = -1;
  size_t chan_written = 0;
  bool reaped = false;
  bool forced = false;
  ProcessEnd forced_end = ProcessEnd::kTimedOut;
  int wait_status = 0;
  Clock::time_point start, reaped_at;
  ProcessResult result;

  bool FdsOpen() const { return out_fd >= 0 || err_fd >= 0 || chan_fd >= 0; }
  bool Finished() const { return pid < 0 || (reaped && !FdsOpen()); }
  void KillGroup(int sig = SIGKILL) const {
    if (pid > 0) ::kill(-pid, sig);
  }
};

namespace {
// In the child after fork/clone: its standard fds, the protocol channel, its jail, exec.
[[noreturn]] void ExecChild(const ProcessSpec& spec, int devnull, int out_w, int err_w, int chan_w,
                            int sync_r, char** argv, char** envp) {
  ::setpgid(0, 0);
  ::dup2(devnull, 0);
  ::dup2(out_w, 1);
  ::dup2(err_w, 2);
  if (chan_w >= 0) {
    if (chan_w == 3) ::fcntl(3, F_SETFD, 0);
    else ::dup2(chan_w, 3);
  }
  if (sync_r >= 0) {  // the parent writes our uid/gid maps first, then one byte
    // A byte, not EOF: a child cloned meanwhile by another thread holds a copy of the write
    // end until it execs, and two such children would wait for each other.
    char b = 0;
    ssize_t n;
    while ((n = ::read(sync_r, &b, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) _exit(util::kSandboxExit);  // the parent gave up on us
    ::close(sync_r);
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
pid_t ForkOrClone(const ProcessSpec& spec, int* sync_r, int* sync_w, std::string* err) {
  if (!spec.jail) return ::fork();
  if (std::string e = spec.jail->Error(); !e.empty()) {
    *err = "sandbox: " + e;
    return -1;
  }
  int sp[2];
  if (::pipe2(sp, O_CLOEXEC) != 0) return -1;
  *sync_r = sp[0];
  *sync_w = sp[1];
  // A raw clone with no stack argument behaves as fork() (the child continues on a copy).
  long p = ::syscall(SYS_clone, spec.jail->CloneFlags() | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (p < 0) *err = std::string("clone (sandbox namespaces): ") + std::strerror(errno);
  return static_cast<pid_t>(p);
}

// Forks and execs; fills child->pid and the parent's fd ends. Returns "" or an error.
std::string Spawn(ProcessSet::Id, ProcessSpec& spec, int* out_fd, int* err_fd, int* chan_fd,
                  pid_t* pid) {
  if (spec.argv.empty()) return "empty argv";
  int outp[2], errp[2], sv[2] = {-1, -1};
  if (::pipe2(outp, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  if (::pipe2(errp, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  if (spec.channel && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return std::string("socketpair: ") + std::strerror(errno);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<std::string> env = BuildEnv(spec);
  std::vector<char*> envp = CStrings(env);
  std::vector<std::string> argv_s = spec.argv;
  std::vector<char*> argv = CStrings(argv_s);
  int sync_r = -1, sync_w = -1;
  std::string err;
  pid_t p = ForkOrClone(spec, &sync_r, &sync_w, &err);
  int fork_errno = errno;
  if (p == 0) {
    if (sync_w >= 0) ::close(sync_w);
    ExecChild(spec, devnull, outp[1], errp[1], sv[1], sync_r, argv.data(), envp.data());
  }
  for (int fd : {devnull, outp[1], errp[1], sv[1], sync_r})
    if (fd >= 0) ::close(fd);
  if (p > 0) ::setpgid(p, p);
  if (p > 0 && spec.jail) {
    err = spec.jail->AfterClone(p);
    if (err.empty() && ::write(sync_w, "g", 1) != 1) err = std::string("sandbox sync: ") + std::strerror(errno);
    if (!err.empty()) ::kill(p, SIGKILL), ::waitpid(p, nullptr, 0);
  }
  if (sync_w >= 0) ::close(sync_w);  // the child goes on (or sees EOF after its kill)
  if (p < 0 && err.empty()) err = std::string("fork: ") + std::strerror(fork_errno);
  if (p < 0 || !err.empty()) {
    for (int fd : {outp[0], errp[0], sv[0]})
      if (fd >= 0) ::close(fd);
    return err;
  }
  *out_fd = outp[0];
  *err_fd = errp[0];
  *chan_fd = sv[0];
  for (int fd : {outp[0], errp[0], sv[0]})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  *pid = p;
  return "";
}
}  // namespace

ProcessSet::ProcessSet() = default;
ProcessSet::~ProcessSet() { KillAll(); }

ProcessSet::Id ProcessSet::Start(ProcessSpec spec) {
  auto c = std::make_unique<Child>();
  c->id = next_id_++;
  c->spec = std::move(spec);
  c->start = Clock::now();
  std::string err = Spawn(c->id, c->spec, &c->out_fd, &c->err_fd, &c->chan_fd, &c->pid);
  if (!err.empty()) {
    c->pid = -1;
    c->result.end = ProcessEnd::kSpawnFailed;
    c->result.spawn_error = err;
  } else {
    c->pid_fd = static_cast<int>(::syscall(SYS_pidfd_open, c->pid, 0));
  }
  Id id = c->id;
  children_.push_back(std::move(c));
  return id;
}

size_t ProcessSet::running() const { return children_.size(); }

void ProcessSet::KillAll() {
  for (auto& c : children_) {
    if (c->pid > 0 && !c->reaped) {
      c->KillGroup();
      ::waitpid(c->pid, &c->wait_status, 0);
      c->reaped = true;
    }
    CloseFd(&c->out_fd);
    CloseFd(&c->err_fd);
    CloseFd(&c->chan_fd);
    CloseFd(&c->pid_fd);
  }
}

void ProcessSet::Reap() {
  for (auto& c : children_) {
    if (c->pid <= 0 || c->reaped) continue;
    if (::waitpid(c->pid, &c->wait_status, WNOHANG) == c->pid) {
      c->reaped = true;
      c->reaped_at = Clock::now();
      c->result.wall_s = std::chrono::duration<double>(c->reaped_at - c->start).count();
      c->KillGroup();  // orphans of the child die with it
      CloseFd(&c->pid_fd);
    }
  }
}

void ProcessSet::EnforceLimits() {
  auto now = Clock::now();
  bool scan = now - last_rss_scan_ >= kRssScanEvery;
  std::map<pid_t, uint64_t> rss;
  if (scan) {
    last_rss_scan_ = now;
    rss = GroupResidentBytes();
  }
  for (auto& c : children_) {
    if (c->pid <= 0 || c->reaped) {
      if (c->reaped && c->FdsOpen() && now - c->reaped_at > kPipeGrace) {
        CloseFd(&c->out_fd);
        CloseFd(&c->err_fd);
        CloseFd(&c->chan_fd);
      }
      continue;
    }
    if (scan) {
      uint64_t r = rss.count(c->pid) ? rss[c->pid] : 0;
      c->result.peak_rss_bytes = std::max(c->result.peak_rss_bytes, r);
      if (!c->forced && c->spec.max_rss_bytes && r > c->spec.max_rss_bytes) {
        c->forced = true;
        c->forced_end = ProcessEnd::kMemoryExceeded;
        c->KillGroup();
      }
    }
    double elapsed = std::chrono::duration<double>(now - c->start).count();
    if (!c->forced && !c->spec.hold && c->spec.wall_limit_s > 0 && elapsed >= c->spec.wall_limit_s) {
      c->forced = true;
      c->forced_end = ProcessEnd::kTimedOut;
      c->KillGroup();
    }
  }
}

namespace {
// Reads what is available; closes the fd at EOF or on error.
void Drain(int* fd, std::string* sink, uint64_t* total, size_t keep, bool tail) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n > 0) {
      if (total) *total += static_cast<uint64_t>(n);
      if (tail) AppendTail(sink, buf, static_cast<size_t>(n), keep);
      else if (sink->size() < keep) sink->append(buf, std::min(static_cast<size_t>(n), keep - sink->size()));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    CloseFd(fd);
    return;
  }
}
}  // namespace

std::vector<std::pair<ProcessSet::Id, ProcessResult>> ProcessSet::CollectFinished() {
  std::vector<std::pair<Id, ProcessResult>> done;
  for (auto it = children_.begin(); it != children_.end();) {
    Child& c = **it;
    if (!c.Finished()) {
      ++it;
      continue;
    }
    ProcessResult& r = c.result;
    if (c.pid > 0) {
      if (c.forced) {
        r.end = c.forced_end;
        r.signal = SIGKILL;
      } else if (WIFEXITED(c.wait_status)) {
        r.end = ProcessEnd::kExited;
        r.exit_code = WEXITSTATUS(c.wait_status);
      } else if (WIFSIGNALED(c.wait_status)) {
        r.end = ProcessEnd::kSignaled;
        r.signal = WTERMSIG(c.wait_status);
      }
    }
    auto trim = [&](std::string* s) {
      if (s->size() > c.spec.tail_bytes) s->erase(0, s->size() - c.spec.tail_bytes);
    };
    trim(&r.stdout_tail);
    trim(&r.stderr_tail);
    done.emplace_back(c.id, std::move(r));
    it = children_.erase(it);
  }
  return done;
}

std::vector<std::pair<ProcessSet::Id, ProcessResult>> ProcessSet::WaitAny(int timeout_ms) {
  auto until = timeout_ms < 0 ? Clock::time_point::max()
                              : Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto done = CollectFinished();
    if (!done.empty() || children_.empty() || Clock::now() >= until) return done;
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, int*>> owners;
    for (auto& c : children_) {
      for (int* fd : {&c->out_fd, &c->err_fd, &c->chan_fd, &c->pid_fd}) {
        if (*fd < 0) continue;
        short ev = POLLIN;
        if (fd == &c->chan_fd && !c->spec.hold && c->chan_written < c->spec.channel_input.size()) ev |= POLLOUT;
        fds.push_back({*fd, ev, 0});
        owners.emplace_back(c.get(), fd);
      }
    }
    int wait_ms = 50;  // limits and pidfd-less reaping are checked at least this often
    if (until != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      wait_ms = std::max<int>(0, std::min<int>(wait_ms, static_cast<int>(left.count())));
    }
    int n = ::poll(fds.data(), fds.size(), wait_ms);
    for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto [c, fd] = owners[i];
      ProcessResult& r = c->result;
      if (fd == &c->pid_fd) continue;  // Reap() below
      if (fd == &c->chan_fd && (fds[i].revents & POLLOUT)) {
        const std::string& in = c->spec.channel_input;
        ssize_t w = ::send(*fd, in.data() + c->chan_written, in.size() - c->chan_written,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) c->chan_written += static_cast<size_t>(w);
      }
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fd == &c->out_fd) Drain(fd, &r.stdout_tail, &r.stdout_bytes, c->spec.tail_bytes, true);
      else if (fd == &c->err_fd) Drain(fd, &r.stderr_tail, &r.stderr_bytes, c->spec.tail_bytes, true);
      else {
        size_t before = r.channel_data.size();
        uint64_t total = 0;
        Drain(fd, &r.channel_data, &total, c->spec.max_channel_bytes, false);
        if (r.channel_data.size() - before < total) r.channel_truncated = true;
      }
    }
    Reap();
    EnforceLimits();
  }
}

bool ProcessSet::Release(Id id, std::string channel_input, double wall_limit_s) {
  Reap();
  for (auto& c : children_) {
    if (c->id != id) continue;
    if (!c->spec.hold || c->pid <= 0 || c->reaped || c->forced) return false;
    c->spec.channel_input = std::move(channel_input);
    c->spec.wall_limit_s = wall_limit_s;
    c->spec.hold = false;
    c->start = Clock::now();
    return true;
  }
  return false;
}

ProcessResult RunProcess(ProcessSpec spec) {
  ProcessSet set;
  set.Start(std::move(spec));
  for (;;) {
    auto done = set.WaitAny();
    if (!done.empty()) return std::move(done.front().second);
  }
}

}  // namespace kz::util
