// Build identities of loaded code: the GNU build ID the linker writes into every ELF object
// (a hash of its contents), so that results cached by one build are not taken for another's.
#pragma once
#include <string>

namespace hlm {

// The build ID (hex) of the loaded object at `path` ("" = the main program). Falls back to
// the file's size and modification time when the object has no build ID note.
std::string build_id_of(const std::string& path);

// hlm's own code that computes results: the main program and the libhlm_* libraries it
// loaded, as "name=id;..." in load order.
std::string host_build_identity();

}  // namespace hlm
