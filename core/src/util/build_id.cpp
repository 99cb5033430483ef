// Build IDs read from the program headers of loaded objects (see build_id.h).
#include "util/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace hlm {
namespace {

struct LoadedObject {
  std::string path;  // "" for the main program
  std::string build_id;
};

std::string hex(const unsigned char* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += {digits[bytes[i] >> 4], digits[bytes[i] & 15]};
  return out;
}

// The NT_GNU_BUILD_ID note of one object, or "".
std::string read_build_id(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* at = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const auto* end = at + ph.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(at);
      const size_t name_size = (note->n_namesz + 3) & ~size_t(3);
      const size_t desc_size = (note->n_descsz + 3) & ~size_t(3);
      const auto* name = at + sizeof(ElfW(Nhdr));
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0)
        return hex(name + name_size, note->n_descsz);
      at += sizeof(ElfW(Nhdr)) + name_size + desc_size;
    }
  }
  return "";
}

std::vector<LoadedObject> loaded_objects() {
  std::vector<LoadedObject> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        static_cast<std::vector<LoadedObject>*>(data)->push_back(
            {info->dlpi_name ? info->dlpi_name : "", read_build_id(info)});
        return 0;
      },
      &out);
  return out;
}

std::string file_stamp(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const auto mtime = fs::last_write_time(path, ec).time_since_epoch().count();
  return "size" + std::to_string(size) + "-mtime" + std::to_string(mtime);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

}  // namespace

std::string build_id_of(const std::string& path) {
  const std::string file = path.empty() ? fs::read_symlink("/proc/self/exe").string() : path;
  for (const auto& object : loaded_objects()) {
    const bool match =
        path.empty() ? object.path.empty() : !object.path.empty() && same_file(object.path, path);
    if (match && !object.build_id.empty()) return object.build_id;
  }
  return file_stamp(file);
}

std::string host_build_identity() {
  std::string out = "hlm=" + build_id_of("") + ";";
  for (const auto& object : loaded_objects()) {
    const std::string name = fs::path(object.path).filename().string();
    if (name.rfind("libhlm_", 0) == 0 && name.rfind("libhlm_plugin_", 0) != 0)
      out +=
          name + "=" + (object.build_id.empty() ? file_stamp(object.path) : object.build_id) + ";";
  }
  return out;
}

}  // namespace hlm
