// Precompiled torch headers for farm builds (docs/compile-farm.md): one GCC PCH per exact
// host flag set under a root directory, built once under an exclusive lock, and held (shared
// lock) by every build that uses it, so that cache eviction (ExtensionCache::Evict) never
// removes one under a compile. Directories are keyed by util::LabelledHasher over a format
// version, the header and its text, the compiler, torch's version and every flag.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "compile/tool_runner.h"

namespace kz::compile {

inline constexpr int kPchFormat = 1;                          // bump when the key or layout changes
inline constexpr const char* kPchName = "kz_torch_ext.h";     // <torch/extension.h>
inline constexpr const char* kSlimName = "kz_torch_host.h";   // kSlimHeader
inline constexpr const char* kFrontendList = "frontend.txt";  // beside a slim PCH (pch_frontend.h)

// <torch/types.h> and torch/python.h's binding headers: <torch/extension.h> without torch's
// C++ frontend (<torch/all.h>: nn, optim, data, ...), every declaration from the same file.
extern const char* const kSlimHeader;
// The text of the header `name` precompiles (kPchName or kSlimName).
std::string PchHeaderText(const std::string& name);

// The compiler flags of a PCH: the host cflags without -DTORCH_EXTENSION_NAME=..., split on
// whitespace (as the build's own command line splits them).
std::vector<std::string> PchFlags(const std::string& cflags);

// The directory name (24 hex digits) of the PCH of `header` for these inputs.
std::string PchKey(const std::string& cxx, const std::string& torch_version, const std::vector<std::string>& flags,
                   const std::string& header);

struct PchOutcome {
  std::string dir;     // holds <header>.gch; "" on failure
  double seconds = 0;  // spent building it here (0: it existed)
  std::string error;   // why there is none
};

// Thread-safety: one per build, on one thread.
class PchStore {
 public:
  PchStore(std::string root, std::string torch_version, ToolRunner runner)
      : root_(std::move(root)), torch_(std::move(torch_version)), runner_(std::move(runner)) {}
  ~PchStore();  // releases the shared locks
  PchStore(const PchStore&) = delete;
  PchStore& operator=(const PchStore&) = delete;

  // The PCH of `header` for `cxx` and `cflags`, built if need be (to a temp file, renamed).
  // A header other than kPchName that fails with a compile error is marked `.failed` and
  // never tried again with these flags; a timeout or a killed compiler is not marked.
  PchOutcome Ensure(const std::string& cxx, const std::string& cflags, const std::string& header);

  const ToolRunner& runner() const { return runner_; }

 private:
  bool HoldShared(const std::string& key, std::string* err);
  std::string Build(const std::string& dir, const std::string& cxx, const std::vector<std::string>& flags,
                    const std::string& header);
  std::string root_, torch_;
  ToolRunner runner_;
  std::map<std::string, int> locks_;  // key -> its lock file, held shared
};

}  // namespace kz::compile
