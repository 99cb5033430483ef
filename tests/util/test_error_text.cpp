// Console forms of errors (util/error_text.h) on LibTorch's own exceptions: one line without
// the backtrace, and the parameters to look at.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "util/error_text.h"

namespace {

std::string torch_error_text(const std::function<void()>& fail) {
  try {
    fail();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ErrorText, ALibTorchErrorLosesItsBacktraceAndKeepsItsMessage) {
  const std::string what = torch_error_text([] {
    torch::matmul(torch::ones({2, 3}), torch::ones({4, 5}));  // shapes that cannot multiply
  });
  ASSERT_FALSE(what.empty());
  const std::string line = hlm::error_summary(what);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(line.find("cannot be multiplied"), std::string::npos) << line;
  if (hlm::has_backtrace(what)) {
    EXPECT_LT(line.size(), what.size());
  }
  EXPECT_NE(hlm::likely_parameters(what).find("d_model"), std::string::npos);
}

TEST(ErrorText, AMessageWithoutABacktraceIsKeptWhole) {
  EXPECT_FALSE(hlm::has_backtrace("stage 'x': no records"));
  EXPECT_EQ(hlm::error_summary("first\nsecond\n"), "first; second");
  EXPECT_EQ(hlm::likely_parameters("no records"), "");
  EXPECT_NE(hlm::likely_parameters("CUDA out of memory. Tried to allocate").find("batch"),
            std::string::npos);
}

}  // namespace
