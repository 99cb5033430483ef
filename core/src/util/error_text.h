// Error messages for the console: LibTorch's (c10::Error) carry a C++ backtrace of 13 to 20
// frames after the message, which belongs in a log, not in front of a user.
#pragma once
#include <string>

namespace hlm {

// The message without a backtrace, on one line (newlines become "; ").
std::string error_summary(const std::string& what);

// True when what carries a backtrace that error_summary leaves out.
bool has_backtrace(const std::string& what);

// For an error raised inside LibTorch during a training or scoring stage: the parameters to
// look at first, from the kind of failure ("" when the message names no known kind).
std::string likely_parameters(const std::string& what);

}  // namespace hlm
