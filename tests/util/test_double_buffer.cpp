// DoubleBuffer: items in order, the consumer's buffer never refilled while it holds it, the
// wait counted, and a clean stop with the producer blocked. Run under ThreadSanitizer by
// tools/sanitize.sh tsan (the batch prefetcher is this class with tensors).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "util/double_buffer.h"

namespace {

using Items = hlm::DoubleBuffer<std::vector<int64_t>>;

// Item k is 4096 copies of k.
void fill_with_index(int64_t k, std::vector<int64_t>& buffer) {
  for (auto& v : buffer) v = k;
}

TEST(DoubleBuffer, HandsOutItemsInOrderFromTheStartIndex) {
  Items items(std::vector<int64_t>(4096), std::vector<int64_t>(4096), fill_with_index, 5);
  for (int64_t k = 5; k < 2005; ++k) {
    const auto& item = items.next(nullptr);
    ASSERT_EQ(item.front(), k);
    ASSERT_EQ(item.back(), k);
  }
}

// The consumer reads its item slowly while the producer races ahead: every element still
// holds the item's index when the consumer is done (the producer refills only the other
// buffer, then waits).
TEST(DoubleBuffer, NeverRefillsTheBufferTheConsumerHolds) {
  Items items(std::vector<int64_t>(4096), std::vector<int64_t>(4096), fill_with_index, 0);
  for (int64_t k = 0; k < 200; ++k) {
    const auto& item = items.next(nullptr);
    if (k % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    for (const int64_t v : item) ASSERT_EQ(v, k) << "item " << k << " was overwritten";
  }
}

// The first item takes 50 ms to make: the consumer's wait is counted.
TEST(DoubleBuffer, CountsTheTimeTheConsumerWaits) {
  Items items(
      std::vector<int64_t>(1), std::vector<int64_t>(1),
      [](int64_t k, std::vector<int64_t>& buffer) {
        if (k == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        buffer[0] = k;
      },
      0);
  double waited = 0;
  EXPECT_EQ(items.next(&waited)[0], 0);
  EXPECT_GE(waited, 0.04);
}

// Destroyed while the producer waits for a buffer (both filled, one held): returns.
TEST(DoubleBuffer, StopsWhileTheProducerWaitsForABuffer) {
  std::atomic<int> made{0};
  {
    hlm::DoubleBuffer<int> items(
        0, 0, [&](int64_t k, int& buffer) { buffer = int(k), ++made; }, 0);
    EXPECT_EQ(items.next(nullptr), 0);
    while (made < 2) std::this_thread::yield();
  }
  EXPECT_EQ(made, 2);
}

}  // namespace
