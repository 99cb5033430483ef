// What DistributedDataParallel's reducer does, for LibTorch C++: parameters are grouped into
// buckets of about bucket_cap_mb (in reverse order, the order backward produces gradients);
// a bucket's all-reduce starts as soon as its last gradient is ready, so communication
// overlaps the rest of backward; micro-steps of gradient accumulation skip it entirely.
// Groups that share memory between ranks (hlm::SharedTensorMemory) hold the buckets there and
// average in the reduction, so no gradient is copied or divided afterwards.
#pragma once
#include <torch/torch.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <vector>

namespace hlm {

// The bucket of each parameter: filled greedily in reverse order (the order backward produces
// gradients), a new bucket when the next tensor would pass bucket_cap_mb; a tensor is never
// split. Bucket 0 holds the last parameters.
std::vector<size_t> assign_buckets(const std::vector<at::Tensor>& parameters, double bucket_cap_mb);

class GradientSync {
 public:
  GradientSync(std::vector<at::Tensor> parameters, c10::intrusive_ptr<c10d::Backend> group,
               double bucket_cap_mb);
  // Copies rank 0's parameters to every rank (call once before training).
  void broadcast_parameters();
  // Call before the backward of the last micro-step of an optimizer step: that backward's
  // gradient hooks launch the bucket all-reduces. `vote_stop` is this rank's say on stopping
  // after the step, `vote_nonfinite_loss` whether its loss in this step was NaN or infinite;
  // they ride in the first bucket, so agreeing on them costs no collective.
  void prepare_for_backward(bool vote_stop = false, bool vote_nonfinite_loss = false);
  // Call after that backward: waits for every bucket and makes each parameter's .grad a
  // view of its bucket, holding the average over ranks (no copy). Drop the gradients before
  // the next step (drop_gradients) so its backward does not add to them. Returns the
  // seconds spent in communication: this wait plus launch_seconds().
  double finish();
  // Seconds spent starting all-reduces from gradient hooks in the current backward. Backends
  // that reduce on the calling thread (shm) do all their work, waiting for the other ranks
  // included, there; the trainer counts it as all-reduce time, not backward time.
  double launch_seconds() const { return launch_seconds_; }
  // After finish(): how long before the end of backward (the call to finish()) the first
  // bucket's all-reduce was launched; 0 when every bucket waited for finish(). What backward
  // can hide of the communication is bounded by it (the performance model's overlap).
  double launch_lead_seconds() const { return launch_lead_seconds_; }
  // After finish(): whether any rank voted to stop (the same answer on every rank).
  bool stop_voted() const { return stop_voted_; }
  // After finish(): whether any rank's loss was not finite (the same answer on every rank).
  bool nonfinite_loss_voted() const { return nonfinite_loss_voted_; }
  size_t bucket_count() const { return buckets_.size(); }
  // Whether every bucket lives in memory the ranks share (see SharedTensorMemory).
  bool buckets_shared() const { return buckets_shared_; }

 private:
  struct Bucket {
    std::vector<size_t> members;   // indices into parameters_
    std::vector<int64_t> offsets;  // element offset of each member in flat
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
  c10::intrusive_ptr<c10d::Backend> group_;
  bool armed_ = false;
  bool average_in_group_ = false;  // ReduceOp::AVG instead of SUM, then a division
  bool buckets_shared_ = false;
  bool stop_voted_ = false;
  bool nonfinite_loss_voted_ = false;
  double launch_seconds_ = 0;
  double first_launch_ = -1;  // clock at this backward's first launch; -1: none yet
  double launch_lead_seconds_ = 0;
};

}  // namespace hlm
