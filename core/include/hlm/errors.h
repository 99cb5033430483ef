// The typed errors of hlm. Every message names the file (and line for YAML), the offending
// value and what to do about it.
//
// Two ways to build one, both on every error class (the subclasses inherit Error's
// constructors):
//
//   throw DataError("{}: {} samples but the header says {}; fetch the record again",
//                   path, n, expected);              // fmt-style: a format string and values
//   throw ConfigError(message);                      // a finished message, kept as it is
//
// A message alone (a string literal, const char* or std::string) is never read as a format
// string: with no values to format, overload resolution picks the plain-message constructor
// (an exact match) over the format one (which needs a conversion, and at least one value),
// so braces in a message, e.g. from a file path, stay as they are. A format string must be a
// literal; to format a message built at run time, build it first (fmt::format) and pass the
// result. Under C++17 fmt cannot check a format string at compile time (C++20 can): if one
// does not match its values, the error still carries the unformatted text rather than
// throwing fmt::format_error in place of the real error.
#pragma once
#include <fmt/format.h>  // fmt comes with spdlog, which hlm::base links publicly

#include <stdexcept>
#include <string>

namespace hlm {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  explicit Error(const char* message) : std::runtime_error(message) {}

  // fmt-style: Error("{}: {} bytes", path, size). Values use fmt's formatting: integers read
  // as std::to_string would write them; a double needs {:f} to keep std::to_string's six
  // decimals; pass a std::filesystem::path as .string() (fmt would quote it).
  template <typename First, typename... Rest>
  explicit Error(fmt::format_string<First, Rest...> format, First&& first, Rest&&... rest)
      : std::runtime_error(format_message(format, fmt::make_format_args(first, rest...))) {}

 private:
  static std::string format_message(fmt::string_view format, fmt::format_args args) {
    try {
      return fmt::vformat(format, args);
    } catch (const fmt::format_error& e) {
      // A bug in the message, not in what it reports: keep the report.
      return std::string(format.data(), format.size()) + " (message format error: " + e.what() +
             ")";
    }
  }
};
// A workflow, override or parameter is wrong: the user fixes the YAML or the command line.
class ConfigError : public Error {
 public:
  using Error::Error;
};
// Input data is missing, truncated or corrupt.
class DataError : public Error {
 public:
  using Error::Error;
};
// A plugin cannot be found, loaded, or was built for another ABI.
class PluginError : public Error {
 public:
  using Error::Error;
};
// A checkpoint or artifact is incomplete or does not match.
class CheckpointError : public Error {
 public:
  using Error::Error;
};
// A bug in hlm itself.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace hlm
