// splitmix64's finaliser: a portable, exactly specified mix of a 64-bit value, for the
// seeded choices of kz train (the teacher's pairs, the step's tasks) that must reproduce
// on any host.
#pragma once
#include <cstdint>

namespace kz::train {

inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace kz::train
