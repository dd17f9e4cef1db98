// The GPU-time floor of a verdict (issue 18, "where the time goes"): the device time its
// checked calls needed at the measured medians, so a slot's time per sample can be read
// against it. Pure; the verdict is untrusted (a malformed one gives nullopt).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>

namespace kz::verify {

// For a verdict whose stages.timing is "ok": correctness trials (the length of
// stages.correctness.trials) x (reference + candidate median), plus each side's timed calls
// x its median (stages.timing.<side>.median_us and .calls). Warm-up, extra checks and
// rechecks are not counted: a lower bound. nullopt when timing did not run or a needed
// field is missing, negative or not finite.
std::optional<double> GpuFloorSeconds(const nlohmann::json& verdict);

}  // namespace kz::verify
