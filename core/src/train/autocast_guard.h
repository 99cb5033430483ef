// bf16 autocast for the forward pass as a scope: on for the device type it is given (CPU or
// CUDA) when constructed with true, off (and its weight cache cleared) when the scope ends,
// also when an exception leaves it.
#pragma once
#include <ATen/autocast_mode.h>

namespace hlm {

class Bf16Autocast {
 public:
  explicit Bf16Autocast(bool enabled, c10::DeviceType device = c10::DeviceType::CPU)
      : enabled_(enabled), device_(device) {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(device_, true);
    at::autocast::set_autocast_dtype(device_, at::kBFloat16);
  }
  ~Bf16Autocast() {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(device_, false);
    at::autocast::clear_cache();
  }
  Bf16Autocast(const Bf16Autocast&) = delete;
  Bf16Autocast& operator=(const Bf16Autocast&) = delete;

 private:
  bool enabled_;
  c10::DeviceType device_;
};

}  // namespace hlm
