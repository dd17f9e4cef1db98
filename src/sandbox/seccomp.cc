#include "sandbox/seccomp.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>

namespace kz::sandbox {
namespace {
#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
#error "the seccomp filter knows x86_64 and aarch64"
#endif

struct Denied {
  long nr;
  const char* name;
};
#define KZ_DENY(n) {SYS_##n, #n},
const Denied kDenied[] = {
    KZ_DENY(ptrace) KZ_DENY(process_vm_readv) KZ_DENY(process_vm_writev) KZ_DENY(kcmp)
    KZ_DENY(mount) KZ_DENY(umount2) KZ_DENY(pivot_root) KZ_DENY(chroot)
    KZ_DENY(move_mount) KZ_DENY(open_tree) KZ_DENY(fsopen) KZ_DENY(fsconfig) KZ_DENY(fsmount)
    KZ_DENY(fspick) KZ_DENY(mount_setattr) KZ_DENY(unshare) KZ_DENY(setns)
    KZ_DENY(keyctl) KZ_DENY(add_key) KZ_DENY(request_key) KZ_DENY(bpf) KZ_DENY(perf_event_open)
    KZ_DENY(userfaultfd) KZ_DENY(io_uring_setup) KZ_DENY(io_uring_enter) KZ_DENY(io_uring_register)
    KZ_DENY(name_to_handle_at) KZ_DENY(open_by_handle_at) KZ_DENY(kexec_load)
    KZ_DENY(kexec_file_load) KZ_DENY(init_module) KZ_DENY(finit_module) KZ_DENY(delete_module)
    KZ_DENY(swapon) KZ_DENY(swapoff) KZ_DENY(reboot) KZ_DENY(acct) KZ_DENY(quotactl)
    KZ_DENY(syslog) KZ_DENY(settimeofday) KZ_DENY(clock_settime) KZ_DENY(clock_adjtime)
    KZ_DENY(adjtimex) KZ_DENY(sethostname) KZ_DENY(setdomainname) KZ_DENY(lookup_dcookie)
    KZ_DENY(vhangup) KZ_DENY(pidfd_getfd)
#if defined(__x86_64__)
    KZ_DENY(iopl) KZ_DENY(ioperm) KZ_DENY(uselib)
#endif
};
#undef KZ_DENY

constexpr unsigned kNewNamespaces = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                    CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x00000080 /*CLONE_NEWTIME*/;

sock_filter Stmt(unsigned short code, unsigned k) { return BPF_STMT(code, k); }
sock_filter Jump(unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
  return BPF_JUMP(code, k, jt, jf);
}
}  // namespace

std::vector<sock_filter> SeccompProgram() {
  const unsigned eperm = SECCOMP_RET_ERRNO | EPERM;
  std::vector<sock_filter> p = {
      Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      Jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
#if defined(__x86_64__)
  p.push_back(Jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // the x32 ABI
  p.push_back(Stmt(BPF_RET | BPF_K, eperm));
#endif
  for (const auto& d : kDenied) {
    p.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(d.nr), 0, 1));
    p.push_back(Stmt(BPF_RET | BPF_K, eperm));
  }
  p.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
  p.push_back(Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 0));
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  p.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));  // low 32 bits
  p.push_back(Jump(BPF_JMP | BPF_JSET | BPF_K, kNewNamespaces, 0, 1));
  p.push_back(Stmt(BPF_RET | BPF_K, eperm));
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return p;
}

std::vector<const char*> DeniedSyscalls() {
  std::vector<const char*> out;
  for (const auto& d : kDenied) out.push_back(d.name);
  out.push_back("clone(CLONE_NEW*)");
  out.push_back("clone3 (ENOSYS)");
  return out;
}

}  // namespace kz::sandbox
