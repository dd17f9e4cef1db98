// The closed set of verdict statuses (docs/verdict.md) and the exit codes of `kz verify`.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kz::verify {

enum class Status {
  kCorrect,
  kIncorrect,
  kCompileError,
  kRuntimeError,
  kTimeout,
  kRejected,
  kInvalidTask,
  kNotRun,
};

inline constexpr int kExitUsage = 2;     // bad flags, missing or unreadable files
inline constexpr int kExitInternal = 3;  // a bug in kz itself

std::string_view StatusName(Status s);
std::optional<Status> ParseStatus(std::string_view name);
int ExitCode(Status s);

}  // namespace kz::verify
