#include "verify/status.h"

#include <array>
#include <utility>

namespace kz::verify {
namespace {
struct Row {
  Status status;
  std::string_view name;
  int exit_code;
};
constexpr std::array<Row, 8> kRows = {{
    {Status::kCorrect, "correct", 0},
    {Status::kIncorrect, "incorrect", 10},
    {Status::kCompileError, "compile_error", 11},
    {Status::kRuntimeError, "runtime_error", 12},
    {Status::kTimeout, "timeout", 13},
    {Status::kRejected, "rejected", 14},
    {Status::kInvalidTask, "invalid_task", 15},
    {Status::kNotRun, "not_run", 16},
}};
}  // namespace

std::string_view StatusName(Status s) {
  for (const auto& r : kRows)
    if (r.status == s) return r.name;
  return "?";
}

std::optional<Status> ParseStatus(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.status;
  return std::nullopt;
}

int ExitCode(Status s) {
  for (const auto& r : kRows)
    if (r.status == s) return r.exit_code;
  return kExitInternal;
}

}  // namespace kz::verify
