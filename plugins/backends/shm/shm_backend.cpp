// The `shm` backend: a c10d process group for ranks on one host, over shared memory
// (shm_process_group.h).
#include <chrono>

#include "hlm/backend.h"
#include "shm_process_group.h"

namespace {

class ShmBackend : public hlm::Backend {
 public:
  ShmBackend(double chunk_mb, double shared_mb, int timeout_s)
      : chunk_mb_(chunk_mb), shared_mb_(shared_mb), timeout_s_(timeout_s) {}

  std::string device(int) const override { return "cpu"; }

  c10::intrusive_ptr<c10d::Backend> create_group(const c10::intrusive_ptr<c10d::Store>& store,
                                                 int rank, int world_size) override {
    return c10::make_intrusive<hlm::shm::ShmProcessGroup>(
        store, rank, world_size, size_t(chunk_mb_ * 1024 * 1024), size_t(shared_mb_ * 1024 * 1024),
        std::chrono::milliseconds(int64_t(timeout_s_) * 1000));
  }

 private:
  double chunk_mb_, shared_mb_;
  int timeout_s_;
};

const hlm_param_decl kParams[] = {
    {"chunk_mb", "float(0,]", "4", "largest piece of a tensor moved at once, per rank"},
    {"shared_mb", "float(0,]", "256",
     "room per rank for tensors kept in shared memory (gradient buckets; the rest are copied)"},
    {"timeout_s", "int[1,]", "300", "how long a rank waits for the others in a collective"},
};

hlm::Backend* make_shm(const nlohmann::json& p) {
  return new ShmBackend(p.at("chunk_mb").get<double>(), p.at("shared_mb").get<double>(),
                        p.at("timeout_s").get<int>());
}

}  // namespace

HLM_PLUGIN(hlm::Backend, "shm", "1.0.0",
           "CPU collectives through shared memory, for ranks on one host", kParams, make_shm)
