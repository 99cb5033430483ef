// Shared by the fuzz targets: the input written to a file (the readers under test take
// paths, as hlm reads data), and the rule every target checks: bad input may only end in
// hlm's own errors, which name the file; any other exception, a crash or a sanitizer report is
// a finding.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "hlm/errors.h"

namespace hlm::fuzz {

// A folder of this process's own under the temp dir, made once, reused by every input, and
// removed when the process exits normally (after a crash it stays, with the input that did it).
inline const std::filesystem::path& scratch_dir() {
  struct Scratch {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("hlm_fuzz_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(path); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Scratch dir;
  return dir.path;
}

// Writes the bytes to scratch_dir()/name and returns the path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

// Runs body; an hlm::Error (what hlm reports for bad input) is an expected outcome.
template <class Body>
void expect_only_hlm_errors(Body&& body) {
  try {
    body();
  } catch (const hlm::Error&) {
  }
}

}  // namespace hlm::fuzz
