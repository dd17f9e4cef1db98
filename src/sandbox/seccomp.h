// The seccomp-bpf program of a sandboxed child, written by hand (no libseccomp): it is
// built once in the parent and installed in the child after fork without allocating, and
// `kz` stays libc-only for the GPU hosts (docs/decisions.md, "Sandbox").
//
// Denied with EPERM: ptrace, process_vm_readv/writev, kcmp, the mount family (mount,
// umount2, pivot_root, chroot, move_mount, open_tree, fsopen, fsconfig, fsmount, fspick,
// mount_setattr), unshare, setns, clone with any CLONE_NEW* flag, keyctl/add_key/
// request_key, bpf, perf_event_open, userfaultfd, io_uring_*, name_to_handle_at/
// open_by_handle_at, kexec_*, module loading, swapon/off, reboot, acct, quotactl, syslog,
// clock and time setting, sethostname/setdomainname, lookup_dcookie, vhangup, pidfd_getfd.
// clone3 gets ENOSYS (its flags live in memory a filter cannot read; glibc then falls back
// to clone, whose flags the filter checks). Another architecture's syscall ABI is killed.
#pragma once
#include <linux/filter.h>

#include <vector>

namespace kz::sandbox {

std::vector<sock_filter> SeccompProgram();

// Names of the denied system calls (docs, tests).
std::vector<const char*> DeniedSyscalls();

}  // namespace kz::sandbox
