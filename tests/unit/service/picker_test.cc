#include "service/picker.h"

#include <gtest/gtest.h>

namespace kz::service {
namespace {

// Drains `queue` through PickNext as the scheduler does, returning the ids in run order.
std::vector<std::string> RunOrder(std::vector<QueuedJob> queue, ServiceRecord served = {}) {
  std::vector<std::string> order;
  uint64_t tick = 0;
  for (const auto& [c, t] : served) tick = std::max(tick, t);
  while (auto i = PickNext(queue, served)) {
    order.push_back(queue[*i].id);
    served[queue[*i].client] = ++tick;
    queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(*i));
  }
  return order;
}

TEST(PickerTest, EmptyQueueHasNothing) { EXPECT_FALSE(PickNext({}, {})); }

TEST(PickerTest, OneClientIsFifo) {
  EXPECT_EQ(RunOrder({{"a1", 0, "A", 1}, {"a2", 0, "A", 2}, {"a3", 0, "A", 3}}),
            (std::vector<std::string>{"a1", "a2", "a3"}));
}

TEST(PickerTest, HigherPriorityFirstWhateverTheClient) {
  EXPECT_EQ(RunOrder({{"a1", 0, "A", 1}, {"b1", 5, "B", 2}, {"a2", 5, "A", 3}, {"c1", -1, "C", 4}}),
            (std::vector<std::string>{"b1", "a2", "a1", "c1"}));
}

TEST(PickerTest, ABigBatchDoesNotStarveASingleJob) {
  std::vector<QueuedJob> q;
  for (int i = 1; i <= 1000; ++i) q.push_back({"a" + std::to_string(i), 0, "A", static_cast<uint64_t>(i)});
  q.push_back({"b1", 0, "B", 1001});
  auto order = RunOrder(q);
  ASSERT_EQ(order.size(), 1001u);
  EXPECT_EQ(order[0], "a1");  // oldest first when no one was served
  EXPECT_EQ(order[1], "b1");  // then the client served least recently
  EXPECT_EQ(order[2], "a2");
}

TEST(PickerTest, RoundRobinBetweenClientsInOrderOfLastService) {
  // A was served just now, C long ago, B never: B, C, A, then alternating by service.
  ServiceRecord served{{"A", 10}, {"C", 3}};
  auto order = RunOrder({{"a1", 0, "A", 1}, {"a2", 0, "A", 2}, {"c1", 0, "C", 3}, {"b1", 0, "B", 4},
                         {"b2", 0, "B", 5}},
                        served);
  EXPECT_EQ(order, (std::vector<std::string>{"b1", "c1", "a1", "b2", "a2"}));
}

TEST(PickerTest, NeverServedClientsTieOnTheirOldestJob) {
  std::vector<QueuedJob> q{{"b1", 0, "B", 7}, {"a1", 0, "A", 3}, {"c1", 0, "C", 5}};
  EXPECT_EQ(*PickNext(q, {}), 1u);
}

TEST(PickerTest, OldestJobOfAClientEvenIfQueuedOutOfOrder) {
  std::vector<QueuedJob> q{{"a9", 0, "A", 9}, {"a2", 0, "A", 2}};
  EXPECT_EQ(*PickNext(q, {}), 1u);
}

}  // namespace
}  // namespace kz::service
