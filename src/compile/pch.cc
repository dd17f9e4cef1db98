#include "compile/pch.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "compile/pch_frontend.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::compile {
namespace fs = std::filesystem;

const char* const kSlimHeader =
    R"(// Written by KernelZero's build farm: <torch/extension.h> without torch's C++ frontend.
#ifndef KZ_TORCH_HOST_H
#define KZ_TORCH_HOST_H
#include <torch/types.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/python_headers.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/utils/python_numbers.h>
#include <torch/csrc/utils/python_tuples.h>
#include <iterator>
#include <string>
#include <utility>
#endif
)";

std::string PchHeaderText(const std::string& name) {
  return name == kSlimName ? kSlimHeader : "#include <torch/extension.h>\n";
}

std::vector<std::string> PchFlags(const std::string& cflags) {
  std::vector<std::string> out;
  std::istringstream words(cflags);
  for (std::string w; words >> w;)
    if (w.rfind("-DTORCH_EXTENSION_NAME=", 0) != 0) out.push_back(w);
  return out;
}

std::string PchKey(const std::string& cxx, const std::string& torch_version, const std::vector<std::string>& flags,
                   const std::string& header) {
  util::LabelledHasher h;
  h.Add("format", std::to_string(kPchFormat)).Add("header", header).Add("text", PchHeaderText(header));
  h.Add("cxx", cxx).Add("torch", torch_version);
  for (const auto& f : flags) h.Add("flag", f);
  return h.HexDigest().substr(0, 24);  // cache_evict.cc knows PCH directories by 24 hex digits
}

PchStore::~PchStore() {
  for (auto& [key, fd] : locks_) ::close(fd);
}

// Opens and shares <root>/<key>.lock, once per key (a conversion never waits on itself).
bool PchStore::HoldShared(const std::string& key, std::string* err) {
  if (locks_.count(key)) return true;
  std::string path = root_ + "/" + key + ".lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || ::flock(fd, LOCK_SH) != 0) {
    *err = path + ": " + std::error_code(errno, std::generic_category()).message();
    if (fd >= 0) ::close(fd);
    return false;
  }
  locks_[key] = fd;
  return true;
}

// Compiles `header` into <dir>/<header>.gch; "" or the reason it failed.
std::string PchStore::Build(const std::string& dir, const std::string& cxx, const std::vector<std::string>& flags,
                            const std::string& header) {
  std::string err;
  std::string src = dir + "/" + header, gch = src + ".gch", tmp = gch + ".tmp." + std::to_string(::getpid());
  if (!util::MakeDirs(dir, &err) || !util::WriteFileAtomic(src, PchHeaderText(header), &err)) return err;
  // The directory takes the root's owner: a sandboxed compiler runs as the user the root was
  // handed to (docs/sandbox.md), and writes its output here.
  struct stat root {
  }, mine{};
  if (::stat(root_.c_str(), &root) == 0 && ::stat(dir.c_str(), &mine) == 0 && root.st_uid != mine.st_uid &&
      ::chown(dir.c_str(), root.st_uid, root.st_gid) != 0)
    return dir + ": " + std::error_code(errno, std::generic_category()).message();
  std::vector<std::string> argv{cxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-x", "c++-header", src, "-o", tmp});
  ToolRun run = runner_.Run(argv);
  if (!run.ok) {
    util::RemoveAll(tmp);
    bool compile_error = run.exit_code == 1 && header != kPchName && run.output.find("error") != std::string::npos;
    std::string tail = run.output.size() > 2000 ? run.output.substr(run.output.size() - 2000) : run.output;
    if (compile_error) util::WriteFileAtomic(gch.substr(0, gch.size() - 4) + ".failed", tail, &err);
    return header + " (" + run.why + "): " + tail;
  }
  if (header == kSlimName) WriteFrontendList(runner_, dir, cxx, flags);
  std::error_code ec;
  fs::rename(tmp, gch, ec);
  return ec ? gch + ": " + ec.message() : "";
}

PchOutcome PchStore::Ensure(const std::string& cxx, const std::string& cflags, const std::string& header) {
  PchOutcome out;
  std::vector<std::string> flags = PchFlags(cflags);
  std::string key = PchKey(cxx, torch_, flags, header), dir = root_ + "/" + key;
  std::string gch = dir + "/" + header + ".gch", failed = dir + "/" + header + ".failed", text;
  if (!util::MakeDirs(root_, &out.error) || !HoldShared(key, &out.error)) return out;
  auto failed_before = [&] {
    std::string ignored;
    if (!util::ReadFile(failed, &text, &ignored)) return false;
    out.error = header + " did not compile with these flags: " + text;
    return true;
  };
  std::error_code ec;
  if (util::PathExists(gch)) {
    fs::last_write_time(dir, fs::file_time_type::clock::now(), ec);  // least recently used goes first
    out.dir = dir;
    return out;
  }
  if (failed_before()) return out;
  auto start = std::chrono::steady_clock::now();
  int fd = locks_[key];
  ::flock(fd, LOCK_EX);  // a conversion drops the shared lock first
  if (!util::PathExists(gch) && !failed_before()) out.error = Build(dir, cxx, flags, header);
  ::flock(fd, LOCK_SH);
  if (out.error.empty() && !failed_before()) out.dir = dir;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kz::compile
