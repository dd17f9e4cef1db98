// Where one top-level item of cuda.cu goes in the split (cuda_split.h): the device part,
// the host part, both, or a host prototype of what the device part defines.
#pragma once
#include <string>
#include <vector>

#include "compile/cuda_split_items.h"
#include "compile/cuda_split_templates.h"

namespace kz::compile::cuda_split {

struct Placement {
  std::string device, host;  // either may be empty: the item is not in that part
};

// Places `item` (not a namespace block with items inside). A kernel's name is appended to
// `kernels`; a kernel template's to `templates`, with a host text of `TemplateMarker(name)`
// for the caller to replace by its launchers' prototypes. False with the reason when the
// item cannot be placed safely.
bool Place(const Item& item, std::vector<std::string>* kernels, KernelTemplates* templates, Placement* out,
           std::string* why);

std::string TemplateMarker(const std::string& name);

// The (possibly qualified) name declared by a function header `... name(params)`, or "".
std::string DeclaratorName(std::string_view header);

}  // namespace kz::compile::cuda_split
