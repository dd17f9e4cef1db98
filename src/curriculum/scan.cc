#include "curriculum/scan.h"

#include <algorithm>

namespace kz::curriculum {
using nlohmann::json;

bool WorkerScanner::Scan(const std::vector<std::string>& paths, std::vector<ModuleFacts>* out, std::string* err) {
  out->clear();
  for (size_t lo = 0; lo < paths.size(); lo += kBatch) {
    std::vector<std::string> batch(paths.begin() + lo, paths.begin() + std::min(paths.size(), lo + kBatch));
    worker::WorkerCall call;
    call.request = {{"op", "module_scan"}, {"paths", batch}};
    call.env = {{"CUDA_VISIBLE_DEVICES", ""}};
    call.wall_limit_s = 30 + 0.5 * static_cast<double>(batch.size());
    call.max_rss_bytes = 2ull << 30;
    worker::WorkerReply reply = worker::RunWorker(config_, call);
    if (!reply.result || !reply.result->value("ok", false)) {
      std::string why = reply.result ? reply.result->value("error", json::object()).dump()
                                     : worker::DescribeEnd(reply.process);
      return *err = "module_scan failed: " + why, false;
    }
    const json& modules = (*reply.result)["modules"];
    if (!modules.is_array() || modules.size() != batch.size())
      return *err = "module_scan: expected " + std::to_string(batch.size()) + " entries", false;
    for (const auto& m : modules) out->push_back(ParseModuleFacts(m));
  }
  return true;
}

}  // namespace kz::curriculum
