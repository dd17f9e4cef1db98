// `kz serve ...` hands over to the kz-serve executable beside kz.
#pragma once

namespace kz::cli {

// True when the first argument after kz's global flags is "serve".
bool IsServeInvocation(int argc, char** argv);

// Replaces this process with <dir of kz>/kz-serve and the same arguments. Returns only on
// failure, with a message on stderr and the internal-error exit code.
int ExecServe(int argc, char** argv);

}  // namespace kz::cli
