// A small catalog for the curriculum's unit tests (the real one is tested in Python).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "curriculum/catalog.h"

namespace kz::curriculum::testing {

inline nlohmann::json SmallCatalogJson(int n_extra = 0) {
  nlohmann::json apis = {
      {{"id", "conv2d"}, {"kind", "module"}, {"qualified", "torch.nn.Conv2d"},
       {"aliases", {"torch.nn.Conv2d", "torch.nn.functional.conv2d", "torch.conv2d"}}, {"category", "convolution"}},
      {{"id", "relu"}, {"kind", "module"}, {"qualified", "torch.nn.ReLU"},
       {"aliases", {"torch.nn.ReLU", "torch.nn.functional.relu", "torch.relu", "Tensor.relu"}}, {"category", "activation"}},
      {{"id", "matmul"}, {"kind", "function"}, {"qualified", "torch.matmul"},
       {"aliases", {"torch.matmul", "Tensor.matmul"}}, {"category", "contraction"}},
      {{"id", "sum"}, {"kind", "function"}, {"qualified", "torch.sum"},
       {"aliases", {"torch.sum", "Tensor.sum"}}, {"category", "reduction"}},
      {{"id", "add"}, {"kind", "function"}, {"qualified", "torch.add"},
       {"aliases", {"torch.add", "Tensor.add"}}, {"category", "elementwise"}},
      {{"id", "log"}, {"kind", "function"}, {"qualified", "torch.log"},
       {"aliases", {"torch.log", "Tensor.log"}}, {"category", "elementwise"}}};
  for (int i = 0; i < n_extra; ++i) {
    std::string id = "op" + std::to_string(i);
    apis.push_back({{"id", id}, {"kind", "function"}, {"qualified", "torch." + id},
                    {"aliases", {"torch." + id}}, {"category", "elementwise"}});
  }
  return {{"format", "kz.api_catalog"}, {"version", 1}, {"torch", "2.11.0"}, {"apis", apis}};
}

inline Catalog SmallCatalog(int n_extra = 0) {
  Catalog c;
  std::string err;
  if (!c.FromJson(SmallCatalogJson(n_extra), &err)) throw std::runtime_error(err);
  return c;
}

}  // namespace kz::curriculum::testing
