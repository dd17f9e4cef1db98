// Hand-written stand-ins for the Proposer (docs/curriculum.md, "Stand-in modules"): a
// deterministic KernelBench-format module for any API set of the catalog, composed from one
// small snippet per API, so that the validation stages (and the GPU measurement on the H200)
// can run on hundreds of modules without a model that writes them.
//
// A module's forward takes x, y (float, 4 x 8 x 16 x 16, randn) and t (int64, the same
// shape, values in [0, 8)). Each API is one step: a0 = <snippet of the first API>(x); a
// step whose snippet keeps the shape (4, 8, 16, 16) feeds the next step, any other step
// starts again from x. The steps are ordered shape-keeping first (catalog order within);
// the output is the one step not fed on, or the flattened concatenation of all of them.
// Pure functions; the snippet table is static and read-only.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "curriculum/catalog.h"

namespace kz::curriculum {

struct StandinStep {
  std::string init;  // "" or a constructor for self.<m> ("torch.nn.Conv2d(8, 8, 3, padding=1)")
  std::string expr;  // the step's value: {x} its input, {m} the module attribute, y and t the inputs
  bool keeps_shape = false;  // the value is a float tensor of the input's shape (4, 8, 16, 16)
};

// The step of one catalog API: the table's entry, else the category's default (activation
// modules: the class with no arguments; elementwise functions: the function on an input
// brought into its range). nullopt when the API has neither.
std::optional<StandinStep> StandinSnippet(const Api& api);

// The module of an API set (catalog indices; each used in forward). False with *err when
// the set is empty or an API has no snippet.
bool StandinModule(const Catalog& catalog, const std::vector<size_t>& set, std::string* text, std::string* err);

}  // namespace kz::curriculum
