// The typed errors of hlm. Every message names the file (and line for YAML), the offending
// value and what to do about it.
#pragma once
#include <stdexcept>
#include <string>

namespace hlm {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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
