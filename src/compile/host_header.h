// The header a build's host compile (main.cpp) uses, per build: the slim one (pch.h's
// kSlimName), else torch's own (kPchName), each through its precompiled header when one can
// be had, and the build.ninja `cflags` that point the compile at it. GCC checks a PCH
// against the flags and ignores an unusable one (-Winvalid-pch says so in the log): a
// mismatch costs time, never correctness.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/pch.h"

namespace kz::compile {

// Thread-safety: one per build, on one thread.
class HostHeader {
 public:
  // `store` null: no precompiled headers (the headers are still swapped). `report` gets
  // pch, pch_seconds and pch_error.
  HostHeader(std::string build_dir, PchStore* store, nlohmann::json* report);

  // The cflags additions for `header`'s PCH ("" = none), built if need be.
  std::string PchFlagsFor(const std::string& header);

  // Why sources `texts` must not use the slim header ("" = they may): it has no PCH here,
  // or their includes reach torch's C++ frontend (pch_frontend.h).
  std::string SlimRefusal(const std::vector<std::string>& texts);

  // Points the host compile at `header`'s PCH; true when build.ninja's cflags changed.
  bool Use(const std::string& header);

 private:
  std::string ninja_, cxx_ = "c++", cflags_;
  bool has_cflags_ = false;
  PchStore* store_;
  nlohmann::json* report_;
  std::map<std::string, std::string> flags_;  // header -> its cflags additions
  std::map<std::string, std::string> dirs_;   // header -> its PCH directory
};

}  // namespace kz::compile
