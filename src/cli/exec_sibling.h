// Subcommands whose code links more than libc run as sibling executables beside kz
// (`kz serve` -> kz-serve, `kz worker` -> kz-worker, `kz generate` -> kz-generate,
// `kz propose`/`kz frontier` -> kz-propose, `kz bench --server` -> kz-bench): kz itself
// must need only libc, so it execs them with the same arguments.
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
