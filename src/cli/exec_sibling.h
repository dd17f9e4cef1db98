// `kz worker ...` hands over to the kz-worker executable beside kz, as `kz serve` does
// with kz-serve (exec_serve.h): kz itself must need only libc, kz-worker links hiredis.
#pragma once
#include <string>

namespace kz::cli {

// True when the first argument after kz's global flags is `subcommand`.
bool IsInvocationOf(int argc, char** argv, const char* subcommand);

// <dir of the running kz>/<exe> (argv0's directory when /proc/self/exe cannot be read).
std::string SiblingPath(const char* argv0, const char* exe);

// Replaces this process with <dir of kz>/<exe> and the same arguments. Returns only on
// failure, with a message on stderr and the internal-error exit code.
int ExecSibling(int argc, char** argv, const char* exe);

}  // namespace kz::cli
