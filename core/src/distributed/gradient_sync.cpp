// Bucketed, overlapped gradient all-reduce (see gradient_sync.h).
#include "distributed/gradient_sync.h"

#include "hlm/backend.h"
#include "hlm/util.h"

namespace hlm {
namespace {

// The votes after the first bucket's gradients, counted from its end.
constexpr int64_t kVotes = 2;
constexpr int64_t kStopVote = -1;
constexpr int64_t kNonFiniteLossVote = -2;

}  // namespace

std::vector<size_t> assign_buckets(const std::vector<at::Tensor>& parameters,
                                   double bucket_cap_mb) {
  const int64_t cap_bytes = std::max<int64_t>(1, int64_t(bucket_cap_mb * 1024 * 1024));
  std::vector<size_t> bucket_of(parameters.size());
  size_t buckets = 0;
  int64_t bucket_bytes = 0;
  for (size_t k = parameters.size(); k-- > 0;) {
    const int64_t bytes = parameters[k].numel() * int64_t(parameters[k].element_size());
    if (buckets == 0 || bucket_bytes + bytes > cap_bytes) {
      ++buckets;
      bucket_bytes = 0;
    }
    bucket_of[k] = buckets - 1;
    bucket_bytes += bytes;
  }
  return bucket_of;
}

GradientSync::GradientSync(std::vector<at::Tensor> parameters,
                           c10::intrusive_ptr<c10d::Backend> group, double bucket_cap_mb)
    : parameters_(std::move(parameters)), group_(std::move(group)) {
  TORCH_CHECK(!parameters_.empty(), "GradientSync: the model has no parameters");
  bucket_of_ = assign_buckets(parameters_, bucket_cap_mb);
  ready_.resize(parameters_.size());
  slot_of_.resize(parameters_.size());
  for (size_t k = parameters_.size(); k-- > 0;) {
    if (bucket_of_[k] == buckets_.size()) buckets_.emplace_back();
    Bucket& b = buckets_.back();
    slot_of_[k] = b.members.size();
    b.offsets.push_back(
        b.members.empty() ? 0 : b.offsets.back() + parameters_[b.members.back()].numel());
    b.members.push_back(k);
  }
  // The first bucket has two elements more, after its gradients: the ranks' votes to stop and
  // on a non-finite loss (kVotes).
  auto* shared = dynamic_cast<SharedTensorMemory*>(group_.get());
  average_in_group_ = shared != nullptr;
  buckets_shared_ = shared != nullptr;
  for (auto& b : buckets_) {
    const at::Tensor& first = parameters_[b.members.front()];
    const int64_t n = b.offsets.back() + parameters_[b.members.back()].numel() +
                      (&b == &buckets_[0] ? kVotes : 0);
    if (shared) b.flat = shared->allocate_shared(n, first.scalar_type());
    if (!b.flat.defined()) {  // no group memory, or it is full
      b.flat = torch::zeros({n}, first.options());
      buckets_shared_ = false;
    }
  }
  for (size_t k = 0; k < parameters_.size(); ++k)
    parameters_[k].register_hook([this, k](at::Tensor grad) {
      on_gradient(k, grad);
      return grad;
    });
}

void GradientSync::broadcast_parameters() {
  torch::NoGradGuard no_grad;
  for (auto& b : buckets_) {
    for (size_t s = 0; s < b.members.size(); ++s)
      b.flat.narrow(0, b.offsets[s], parameters_[b.members[s]].numel())
          .copy_(parameters_[b.members[s]].detach().reshape(-1));
    std::vector<at::Tensor> tensors{b.flat};
    group_->broadcast(tensors, c10d::BroadcastOptions{})->wait();
    for (size_t s = 0; s < b.members.size(); ++s) {
      at::Tensor& p = parameters_[b.members[s]];
      p.detach().copy_(b.flat.narrow(0, b.offsets[s], p.numel()).view_as(p));
    }
  }
}

void GradientSync::prepare_for_backward(bool vote_stop, bool vote_nonfinite_loss) {
  armed_ = true;
  buckets_[0].flat[kStopVote].fill_(vote_stop ? 1 : 0);
  buckets_[0].flat[kNonFiniteLossVote].fill_(vote_nonfinite_loss ? 1 : 0);
  launch_seconds_ = 0;
  first_launch_ = -1;
  std::fill(ready_.begin(), ready_.end(), 0);
  for (auto& b : buckets_) {
    b.pending = b.members.size();
    b.work.reset();
  }
}

void GradientSync::on_gradient(size_t k, const at::Tensor& grad) {
  if (!armed_) return;  // accumulation micro-step: no communication
  ready_[k] = 1;
  Bucket& b = buckets_[bucket_of_[k]];
  const at::Tensor& p = parameters_[k];
  auto slot = b.flat.narrow(0, b.offsets[slot_of_[k]], p.numel());
  // The hook sees this backward's gradient before it is added to .grad, which still holds
  // the earlier micro-steps' sum.
  if (p.grad().defined())
    torch::add_out(slot, p.grad().reshape(-1), grad.reshape(-1));
  else
    slot.copy_(grad.reshape(-1));
  if (--b.pending == 0) launch(b);
}

void GradientSync::launch(Bucket& b) {
  const double start = now_seconds();
  if (first_launch_ < 0) first_launch_ = start;
  std::vector<at::Tensor> tensors{b.flat};
  c10d::AllreduceOptions options;
  options.reduceOp = average_in_group_ ? c10d::ReduceOp::AVG : c10d::ReduceOp::SUM;
  b.work = group_->allreduce(tensors, options);
  launch_seconds_ += now_seconds() - start;
}

double GradientSync::finish() {
  const double in_backward = launch_seconds_;
  const double start = now_seconds();
  launch_lead_seconds_ = first_launch_ >= 0 ? start - first_launch_ : 0.0;
  for (auto& b : buckets_) {
    if (b.work) continue;
    // Some parameter got no gradient in this backward: reduce what .grad holds (or zero).
    for (size_t s = 0; s < b.members.size(); ++s) {
      const at::Tensor& p = parameters_[b.members[s]];
      if (ready_[b.members[s]]) continue;
      auto slot = b.flat.narrow(0, b.offsets[s], p.numel());
      if (p.grad().defined())
        slot.copy_(p.grad().reshape(-1));
      else
        slot.zero_();
    }
    launch(b);
  }
  const double world = double(group_->getSize());
  torch::NoGradGuard no_grad;
  for (auto& b : buckets_) {
    b.work->wait();
    if (!average_in_group_) b.flat.div_(world);
    for (size_t s = 0; s < b.members.size(); ++s) {
      at::Tensor& p = parameters_[b.members[s]];
      // The gradient becomes a view of the bucket (no copy); the next step's backward
      // refills the bucket only after the trainer has dropped these gradients.
      p.mutable_grad() = b.flat.narrow(0, b.offsets[s], p.numel()).view_as(p);
    }
  }
  stop_voted_ = buckets_[0].flat[kStopVote].item<double>() > 0;
  nonfinite_loss_voted_ = buckets_[0].flat[kNonFiniteLossVote].item<double>() > 0;
  armed_ = false;
  // Buckets launched here are counted by the clock above, not twice.
  return now_seconds() - start + in_backward;
}

}  // namespace hlm
