// The template teacher of `kz train`'s SFT cold start (docs/training.md, "Cold start"): a
// seeded generator of (task, Triton kernel) pairs for a documented subset of the catalog.
// Pure: text in, text out; no file or process. Whether a pair is right is the verifier's
// call (`kz train teacher --verify` keeps only the pairs it judges correct).
//
// Families (every pair one task file in KernelBench's format and one candidate file):
//   elementwise  y = chain(x)                     x: [M, N]
//   broadcast    y = chain(x * w) or chain(x + w) x: [M, N], w: [N] (a row vector)
//   row_reduce   r(chain(x), dim=1), r in sum | amax | mean
//   softmax      softmax or log_softmax(chain(x), dim=1)
// chain = 1..max_chain ops drawn from the unary table (relu, sigmoid, silu, tanh, abs,
// square, leaky_relu, clamp, exp(-|v|), scale, shift). Not covered: contractions
// (matmul), convolutions, pooling, normalisations with statistics, integer dtypes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kz::train {

struct TeacherOptions {
  uint64_t seed = 1;
  int max_chain = 3;                  // ops per chain, 1..max_chain
  int64_t max_elements = 1 << 16;     // M * N at most (small: the CPU interpreter runs them)
  int64_t min_rows = 8, max_rows = 256;
  int64_t min_cols = 16, max_cols = 1024;
  std::vector<std::string> families{};  // empty: all of FamilyNames()
};

struct TeacherPair {
  std::string id;        // "teach_0007_softmax": index and family
  std::string family;
  std::vector<std::string> ops;  // the chain, then the family's last op if any
  int64_t rows = 0, cols = 0;
  std::string task_source;       // Model, get_inputs, get_init_inputs
  std::string kernel_source;     // ModelNew with its @triton.jit kernel
};

// The four family names, in the order above.
const std::vector<std::string>& FamilyNames();

// "" when usable, else why not (unknown family, max_chain < 1, empty size ranges, a
// size range that max_elements cannot hold).
std::string Validate(const TeacherOptions& o);

// Pair `index` of the sequence seeded by o.seed: the same (options, index) always gives the
// same pair, so a run can make pairs 0..n-1 in any order or resume after a kill.
TeacherPair MakePair(const TeacherOptions& o, int64_t index);

}  // namespace kz::train
