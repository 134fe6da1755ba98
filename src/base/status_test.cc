// SPDX-License-Identifier: Apache-2.0
#include "base/status.h"

#include <errno.h>

#include <gtest/gtest.h>

namespace vigil {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) {
    return InvalidArgumentError("odd: " + std::to_string(x));
  }
  return x / 2;
}

Status Quarter(int x, int* out) {
  VIGIL_ASSIGN_OR_RETURN(int half, Half(x));
  VIGIL_ASSIGN_OR_RETURN(*out, Half(half));
  return OkStatus();
}

TEST(StatusTest, ErrnoMapsToCodes) {
  EXPECT_EQ(ErrnoStatus(ENOENT, "open /x").code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(EACCES, "open /x").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(ENOENT, "open /x").message(), "open /x: No such file or directory");
  EXPECT_TRUE(IsAbsent(ErrnoStatus(EPERM, "x")));
}

TEST(StatusTest, AssignOrReturnPropagatesFirstError) {
  int out = 0;

  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Quarter(6, &out);

  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: odd: 3");
}

TEST(StatusTest, WithContextPrefixesMessage) {
  Status s = NotFoundError("gone").WithContext("collector cpu");

  EXPECT_EQ(s.message(), "collector cpu: gone");
  EXPECT_TRUE(OkStatus().WithContext("x").ok());
}

}  // namespace
}  // namespace vigil
