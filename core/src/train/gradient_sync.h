// What DistributedDataParallel's reducer does, for LibTorch C++: parameters are grouped into
// buckets of about bucket_cap_mb (in reverse order, the order backward produces gradients);
// a bucket's all-reduce starts as soon as its last gradient is ready, so communication
// overlaps the rest of backward; micro-steps of gradient accumulation skip it entirely.
#pragma once
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/torch.h>

#include <vector>

namespace hlm {

class GradientSync {
 public:
  GradientSync(std::vector<at::Tensor> parameters, c10::intrusive_ptr<c10d::ProcessGroup> group,
               double bucket_cap_mb);
  // Copies rank 0's parameters to every rank (call once before training).
  void broadcast_parameters();
  // Call before the backward of the last micro-step of an optimizer step: that backward's
  // gradient hooks launch the bucket all-reduces.
  void prepare_for_backward();
  // Call after that backward: waits for every bucket and makes each parameter's .grad a
  // view of its bucket, holding the average over ranks (no copy). Drop the gradients before
  // the next step (drop_gradients) so its backward does not add to them. Returns the
  // seconds spent waiting for communication.
  double finish();
  size_t bucket_count() const { return buckets_.size(); }

 private:
  struct Bucket {
    std::vector<size_t> members;     // indices into parameters_
    std::vector<int64_t> offsets;    // element offset of each member in flat
    at::Tensor flat;
    size_t pending = 0;
    c10::intrusive_ptr<c10d::Work> work;
  };
  void on_gradient(size_t param, const at::Tensor& grad);
  void launch(Bucket& bucket);

  std::vector<at::Tensor> parameters_;
  std::vector<size_t> bucket_of_, slot_of_;
  std::vector<char> ready_;  // gradient seen in this step's synchronised backward
  std::vector<Bucket> buckets_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  bool armed_ = false;
};

}  // namespace hlm
