#include "util/hash.h"

#include <gtest/gtest.h>

namespace kz::util {

TEST(Hash, HexDigestIsStableAnd32Chars) {
  EXPECT_EQ(Hash128Hex("abc").size(), 32u);
  EXPECT_EQ(Hash128Hex("abc"), Hash128Hex("abc"));
  EXPECT_NE(Hash128Hex("abc"), Hash128Hex("abd"));
}

TEST(LabelledHasher, FieldBoundariesAndLabelsMatter) {
  auto a = LabelledHasher().Add("x", "ab").Add("y", "c").HexDigest();
  auto b = LabelledHasher().Add("x", "a").Add("y", "bc").HexDigest();
  auto c = LabelledHasher().Add("z", "ab").Add("y", "c").HexDigest();
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, LabelledHasher().Add("x", "ab").Add("y", "c").HexDigest());
}

}  // namespace kz::util
