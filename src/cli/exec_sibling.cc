#include "cli/exec_sibling.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "verify/status.h"

namespace kz::cli {

bool IsInvocationOf(int argc, char** argv, const char* subcommand) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-q" || a == "--quiet" || a == "--debug") continue;
    return a == subcommand;
  }
  return false;
}

std::string SiblingPath(const char* argv0, const char* exe) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(argv0) : self).parent_path() / exe;
}

int ExecSibling(int argc, char** argv, const char* exe) {
  std::string path = SiblingPath(argv[0], exe);
  std::vector<char*> args(argv, argv + argc);
  args[0] = path.data();
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  std::cerr << "kz: cannot run " << path << ": " << std::strerror(errno) << " (is " << exe << " built beside kz?)\n";
  return verify::kExitInternal;
}

}  // namespace kz::cli
