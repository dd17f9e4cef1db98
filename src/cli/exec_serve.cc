#include "cli/exec_serve.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "verify/status.h"

namespace kz::cli {

bool IsServeInvocation(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-q" || a == "--quiet" || a == "--debug") continue;
    return a == "serve";
  }
  return false;
}

int ExecServe(int argc, char** argv) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string path = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "kz-serve";
  std::vector<char*> args(argv, argv + argc);
  args[0] = path.data();
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  std::cerr << "kz serve: cannot run " << path << ": " << std::strerror(errno)
            << " (is kz-serve built beside kz?)\n";
  return verify::kExitInternal;
}

}  // namespace kz::cli
