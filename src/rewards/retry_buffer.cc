#include "rewards/retry_buffer.h"

#include <algorithm>

namespace kz::rewards {
using json = nlohmann::json;

void RetryBuffer::OfferAllFail(const std::string& task) {
  ++stats_.offered;
  if (retries(task) >= max_retries_) {
    ++stats_.exhausted;
    return;
  }
  if (std::find(queue_.begin(), queue_.end(), task) != queue_.end()) return;  // already waiting
  if (queue_.size() >= capacity_) {
    ++stats_.dropped_full;
    return;
  }
  queue_.push_back(task);
  ++stats_.enqueued;
}

std::vector<std::string> RetryBuffer::Take(size_t n) {
  std::vector<std::string> out;
  while (out.size() < n && !queue_.empty()) {
    out.push_back(queue_.front());
    queue_.pop_front();
    ++retries_[out.back()];
    ++stats_.retried;
  }
  return out;
}

void RetryBuffer::RecordRetry(const std::string& task, bool recovered) {
  (void)task;
  if (recovered) ++stats_.recovered;
}

int RetryBuffer::retries(const std::string& task) const {
  auto it = retries_.find(task);
  return it == retries_.end() ? 0 : it->second;
}

json RetryBuffer::ToJson() const {
  return {{"format", "kz.retry_buffer/1"}, {"capacity", capacity_}, {"max_retries", max_retries_},
          {"queue", std::vector<std::string>(queue_.begin(), queue_.end())}, {"retries", retries_},
          {"stats", {{"offered", stats_.offered}, {"enqueued", stats_.enqueued}, {"dropped_full", stats_.dropped_full},
                     {"exhausted", stats_.exhausted}, {"retried", stats_.retried}, {"recovered", stats_.recovered}}}};
}

std::optional<RetryBuffer> RetryBuffer::FromJson(const json& j, std::string* err) {
  try {
    if (j.at("format") != "kz.retry_buffer/1") throw std::runtime_error("format");
    RetryBuffer b(j.at("capacity").get<size_t>(), j.at("max_retries").get<int>());
    for (const auto& t : j.at("queue")) b.queue_.push_back(t.get<std::string>());
    if (b.queue_.size() > b.capacity_) throw std::runtime_error("queue longer than its capacity");
    b.retries_ = j.at("retries").get<std::map<std::string, int>>();
    const json& s = j.at("stats");
    b.stats_ = {s.at("offered").get<long>(), s.at("enqueued").get<long>(), s.at("dropped_full").get<long>(),
                s.at("exhausted").get<long>(), s.at("retried").get<long>(), s.at("recovered").get<long>()};
    return b;
  } catch (const std::exception& e) {
    *err = std::string("not a kz.retry_buffer/1 object: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace kz::rewards
