// bf16 autocast for the forward pass as a scope: on when constructed with true, off (and
// its weight cache cleared) when the scope ends, also when an exception leaves it.
#pragma once
#include <ATen/autocast_mode.h>

namespace hlm {

class Bf16Autocast {
 public:
  explicit Bf16Autocast(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  }
  ~Bf16Autocast() {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
  }
  Bf16Autocast(const Bf16Autocast&) = delete;
  Bf16Autocast& operator=(const Bf16Autocast&) = delete;

 private:
  bool enabled_;
};

}  // namespace hlm
