// The child's side of a Jail: runs between clone() and exec, so only system calls and no
// allocation (the supervisor may be multithreaded; the plan was built before the fork).
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/plan.h"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif

namespace kz::sandbox {
namespace {
void Put(const char* s) {
  ssize_t rc = ::write(2, s, std::strlen(s));
  (void)rc;
}

[[noreturn]] void Fail(const char* step, const char* what) {
  int err = errno;
  const char* desc = ::strerrordesc_np(err);
  Put("kz-sandbox: ");
  Put(step);
  Put(" ");
  Put(what);
  Put(": ");
  Put(desc ? desc : "unknown error");
  Put("\n");
  _exit(util::kSandboxExit);
}

void Need(bool ok, const char* step, const char* what) {
  if (!ok) Fail(step, what);
}

void MakeReadOnly(const char* target) {
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, target, AT_RECURSIVE, &attr, sizeof attr) == 0) return;
  // Older kernels: the top mount only, keeping the flags a less privileged namespace may not clear.
  Need(::mount(nullptr, target, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) == 0,
       "read-only remount", target);
}

void RunOp(const Jail::Op& op, uid_t uid, gid_t gid) {
  const char* t = op.target.c_str();
  bool ok = true;
  switch (op.kind) {
    case Jail::Op::kMkdir: ok = ::mkdir(t, 0755) == 0 || errno == EEXIST; break;
    case Jail::Op::kTouch: {
      int fd = ::open(t, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      ok = fd >= 0 || errno == EEXIST;
      if (fd >= 0) ::close(fd);
      break;
    }
    case Jail::Op::kBind:
      ok = ::mount(op.source.c_str(), t, nullptr, MS_BIND | MS_REC, nullptr) == 0;
      if (ok && op.read_only) MakeReadOnly(t);
      break;
    case Jail::Op::kTmpfs: ok = ::mount("tmpfs", t, "tmpfs", MS_NOSUID | MS_NODEV, op.source.c_str()) == 0; break;
    case Jail::Op::kProc: ok = ::mount("proc", t, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0; break;
    case Jail::Op::kSymlink: ok = ::symlink(op.source.c_str(), t) == 0; break;
    case Jail::Op::kOverlay: ok = ::mount("overlay", t, "overlay", MS_NOSUID | MS_NODEV, op.source.c_str()) == 0; break;
  }
  if (!ok && !op.optional) Fail("mount plan", t);
  if (ok && op.owned) Need(::chown(t, uid, gid) == 0, "chown", t);
}

void Pivot(const char* root) {
  Need(::chdir(root) == 0, "chdir", root);
  Need(::syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root", root);
  Need(::umount2(".", MNT_DETACH) == 0, "umount", "old root");
  Need(::chdir("/") == 0, "chdir", "/");
  Need(::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) == 0,
       "read-only remount", "/");
}

void Limit(int resource, uint64_t value, const char* name) {
  rlimit cur{};
  ::getrlimit(resource, &cur);
  rlim_t v = static_cast<rlim_t>(value);
  if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v) v = cur.rlim_max;
  rlimit want{v, v};  // soft = hard: the candidate cannot raise it again
  Need(::setrlimit(resource, &want) == 0, "setrlimit", name);
}

// No capabilities left, none regained by exec, then the uid of the sandbox.
void DropPrivileges(const Jail::Plan& p) {
  if (p.namespaces) {
    for (int c = 0; c <= 63; ++c) ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0);  // EINVAL past the last
    Need(::prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |
                                          SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                                          SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
                 0, 0, 0) == 0,
         "securebits", "lock");
    // Raw system calls: glibc's wrappers would signal the parent's other threads (POSIX
    // per-process credentials), which do not exist in this child, and wait for them forever.
    Need(::syscall(SYS_setresgid, p.gid, p.gid, p.gid) == 0, "setresgid", "sandbox group");
    Need(::syscall(SYS_setresuid, p.uid, p.uid, p.uid) == 0, "setresuid", "sandbox user");
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[2] = {};
    Need(::syscall(SYS_capset, &hdr, none) == 0, "capset", "none");
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  Need(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl", "no_new_privs");
}
}  // namespace

void Jail::Enter() const {
  const Plan& p = *plan_;
  if (p.namespaces) {
    if (p.map_root) Need(::syscall(SYS_setgroups, 0, nullptr) == 0, "setgroups", "none");
    Need(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, "mount", "/ private");
    for (const Op& op : p.ops) RunOp(op, p.uid, p.gid);
    Pivot(p.root.c_str());
  }
  // Without a user namespace RLIMIT_NPROC would count all of the user's processes on the host.
  if (p.namespaces) Limit(RLIMIT_NPROC, p.limits.nproc, "processes");
  Limit(RLIMIT_NOFILE, p.limits.nofile, "open files");
  Limit(RLIMIT_FSIZE, p.limits.fsize_bytes, "file size");
  Limit(RLIMIT_CORE, 0, "core size");
  DropPrivileges(p);
  if (p.seccomp) {
    sock_fprog prog{static_cast<unsigned short>(p.filter.size()), const_cast<sock_filter*>(p.filter.data())};
    Need(::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0, "seccomp", "filter");
  }
  Need(::chdir(p.scratch.c_str()) == 0, "chdir", p.scratch.c_str());
}

}  // namespace kz::sandbox
