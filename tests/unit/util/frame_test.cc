#include "util/frame.h"

#include <gtest/gtest.h>

namespace kz::util {

TEST(Frame, RoundTripsSeveralFramesFedBytewise) {
  std::string wire = EncodeFrame("{\"a\":1}") + EncodeFrame("") + EncodeFrame("xyz");
  FrameDecoder d;
  for (char c : wire) d.Feed(&c, 1);
  std::string p;
  ASSERT_TRUE(d.Pop(&p));
  EXPECT_EQ(p, "{\"a\":1}");
  ASSERT_TRUE(d.Pop(&p));
  EXPECT_EQ(p, "");
  ASSERT_TRUE(d.Pop(&p));
  EXPECT_EQ(p, "xyz");
  EXPECT_FALSE(d.Pop(&p));
  EXPECT_EQ(d.pending_bytes(), 0u);
}

TEST(Frame, LengthIsBigEndian) {
  std::string f = EncodeFrame(std::string(258, 'x'));
  EXPECT_EQ(static_cast<unsigned char>(f[2]), 1);
  EXPECT_EQ(static_cast<unsigned char>(f[3]), 2);
}

TEST(Frame, OversizeLengthFailsTheDecoder) {
  const char hdr[4] = {0x7f, 0, 0, 0};
  FrameDecoder d;
  d.Feed(hdr, 4);
  EXPECT_TRUE(d.failed());
  std::string p;
  EXPECT_FALSE(d.Pop(&p));
}

TEST(Frame, PartialFrameStaysPending) {
  std::string f = EncodeFrame("hello");
  FrameDecoder d;
  d.Feed(f.data(), 6);
  std::string p;
  EXPECT_FALSE(d.Pop(&p));
  EXPECT_EQ(d.pending_bytes(), 6u);
}

}  // namespace kz::util
