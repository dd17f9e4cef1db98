#include "util/subprocess.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "util/proc_stats.h"
#include "util/spawn.h"

namespace kz::util {
namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPipeGrace = std::chrono::seconds(1);  // pipes held by escaped grandchildren
constexpr auto kRssScanEvery = std::chrono::milliseconds(200);

void AppendTail(std::string* buf, const char* data, size_t n, size_t keep) {
  buf->append(data, n);
  if (buf->size() > 2 * keep + 65536) buf->erase(0, buf->size() - keep);
}
}  // namespace

const char* ProcessEndName(ProcessEnd end) {
  switch (end) {
    case ProcessEnd::kExited:
      return "exited";
    case ProcessEnd::kSignaled:
      return "signaled";
    case ProcessEnd::kTimedOut:
      return "timed_out";
    case ProcessEnd::kMemoryExceeded:
      return "memory_exceeded";
    case ProcessEnd::kSpawnFailed:
      return "spawn_failed";
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
  UniqueFd out_fd, err_fd, chan_fd, pid_fd;  // pid_fd: empty where pidfd_open is refused
  size_t chan_written = 0;
  bool reaped = false;
  bool forced = false;
  ProcessEnd forced_end = ProcessEnd::kTimedOut;
  int wait_status = 0;
  Clock::time_point start, reaped_at;
  ProcessResult result;

  bool FdsOpen() const { return out_fd.valid() || err_fd.valid() || chan_fd.valid(); }
  bool Finished() const { return pid < 0 || (reaped && !FdsOpen()); }
  void KillGroup(int sig = SIGKILL) const {
    if (pid > 0) ::kill(-pid, sig);
  }
};

ProcessSet::ProcessSet() = default;
ProcessSet::~ProcessSet() { KillAll(); }

ProcessSet::Id ProcessSet::Start(ProcessSpec spec) {
  auto c = std::make_unique<Child>();
  c->id = next_id_++;
  c->spec = std::move(spec);
  c->start = Clock::now();
  internal::SpawnedFds fds;
  std::string err = internal::Spawn(c->spec, &fds, &c->pid);
  c->out_fd = std::move(fds.out);
  c->err_fd = std::move(fds.err);
  c->chan_fd = std::move(fds.chan);
  if (!err.empty()) {
    c->pid = -1;
    c->result.end = ProcessEnd::kSpawnFailed;
    c->result.spawn_error = err;
  } else {
    c->pid_fd.Reset(static_cast<int>(::syscall(SYS_pidfd_open, c->pid, 0)));
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
    for (UniqueFd* fd : {&c->out_fd, &c->err_fd, &c->chan_fd, &c->pid_fd}) fd->Reset();
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
      c->pid_fd.Reset();
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
        for (UniqueFd* fd : {&c->out_fd, &c->err_fd, &c->chan_fd}) fd->Reset();
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
void Drain(UniqueFd* fd, std::string* sink, uint64_t* total, size_t keep, bool tail) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n > 0) {
      if (total) *total += static_cast<uint64_t>(n);
      if (tail)
        AppendTail(sink, buf, static_cast<size_t>(n), keep);
      else if (sink->size() < keep)
        sink->append(buf, std::min(static_cast<size_t>(n), keep - sink->size()));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    fd->Reset();
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
  auto until = timeout_ms < 0 ? Clock::time_point::max() : Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto done = CollectFinished();
    if (!done.empty() || children_.empty() || Clock::now() >= until) return done;
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, UniqueFd*>> owners;
    for (auto& c : children_) {
      for (UniqueFd* fd : {&c->out_fd, &c->err_fd, &c->chan_fd, &c->pid_fd}) {
        if (!fd->valid()) continue;
        short ev = POLLIN;
        if (fd == &c->chan_fd && !c->spec.hold && c->chan_written < c->spec.channel_input.size()) ev |= POLLOUT;
        fds.push_back({fd->get(), ev, 0});
        owners.emplace_back(c.get(), fd);
      }
    }
    int wait_ms = 50;  // limits and pidfd-less reaping are checked at least this often
    if (until != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      wait_ms = std::max<int>(0, std::min<int>(wait_ms, static_cast<int>(left.count())));
    }
    int n = ::poll(fds.data(), fds.size(), wait_ms);
    bool streamed = false;
    for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto [c, fd] = owners[i];
      ProcessResult& r = c->result;
      if (fd == &c->pid_fd) continue;  // Reap() below
      if (fd == &c->chan_fd && (fds[i].revents & POLLOUT)) {
        const std::string& in = c->spec.channel_input;
        ssize_t w =
            ::send(fd->get(), in.data() + c->chan_written, in.size() - c->chan_written, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) c->chan_written += static_cast<size_t>(w);
      }
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fd == &c->out_fd)
        Drain(fd, &r.stdout_tail, &r.stdout_bytes, c->spec.tail_bytes, true);
      else if (fd == &c->err_fd)
        Drain(fd, &r.stderr_tail, &r.stderr_bytes, c->spec.tail_bytes, true);
      else {
        size_t before = r.channel_data.size();
        uint64_t total = 0;
        Drain(fd, &r.channel_data, &total, c->spec.max_channel_bytes, false);
        if (r.channel_data.size() - before < total) r.channel_truncated = true;
        if (c->spec.stream_channel && r.channel_data.size() > before) streamed = true;
      }
    }
    Reap();
    EnforceLimits();
    if (streamed) return CollectFinished();  // maybe empty: the caller takes the bytes
  }
}

bool ProcessSet::Send(Id id, std::string_view bytes) {
  for (auto& c : children_) {
    if (c->id != id) continue;
    if (!c->chan_fd.valid() || c->reaped || c->forced) return false;
    std::string& in = c->spec.channel_input;
    in.erase(0, c->chan_written);  // what was written already
    c->chan_written = 0;
    in.append(bytes);
    return true;
  }
  return false;
}

std::string ProcessSet::TakeChannel(Id id) {
  for (auto& c : children_)
    if (c->id == id) return std::exchange(c->result.channel_data, {});
  return {};
}

int ProcessSet::GroupId(Id id) const {
  for (const auto& c : children_)
    if (c->id == id) return c->pid > 0 && !c->reaped ? c->pid : -1;
  return -1;
}

bool ProcessSet::ExtendWallLimit(Id id, double seconds) {
  for (auto& c : children_) {
    if (c->id != id) continue;
    if (c->pid <= 0 || c->reaped || c->forced || c->spec.wall_limit_s <= 0) return false;
    c->spec.wall_limit_s += std::max(0.0, seconds);
    return true;
  }
  return false;
}

bool ProcessSet::Expire(Id id) {
  for (auto& c : children_) {
    if (c->id != id) continue;
    if (c->pid <= 0 || c->reaped) return false;
    if (!c->forced) {
      c->forced = true;
      c->forced_end = ProcessEnd::kTimedOut;
    }
    c->KillGroup();
    return true;
  }
  return false;
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
