// Resident memory per process group, read from /proc (Linux).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>

namespace kz::util {

// Sums the resident set size of every process, grouped by process-group id.
std::map<pid_t, uint64_t> GroupResidentBytes();

}  // namespace kz::util
