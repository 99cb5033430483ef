// Data-parallel gradients: two ranks (threads of this process, over Gloo and over the shm
// plugin's shared buckets) each on half a batch must give the update one rank makes on the
// whole batch; accumulation must equal a bigger batch; a stop vote must reach every rank.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "distributed/gradient_sync.h"
#include "hlm/backend.h"
#include "plugin/plugin_host.h"

namespace {

using GroupMaker = std::function<c10::intrusive_ptr<c10d::Backend>(
    const c10::intrusive_ptr<c10d::Store>&, int rank)>;

c10::intrusive_ptr<c10d::Backend> gloo_group(const c10::intrusive_ptr<c10d::Store>& store,
                                             int rank) {
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, 2, options);
}

// The shm backend plugin's groups (the plugin host outlives them: it is static).
GroupMaker shm_groups() {
  static hlm::PluginHost host;
  static std::shared_ptr<hlm::Backend> shm;
  if (!shm) {
    host.load_library(std::string(HLM_BINARY_DIR) + "/plugins/libhlm_plugin_shm.so");
    shm = host.create<hlm::Backend>("backend", "shm", nlohmann::json::object());
  }
  return [](const c10::intrusive_ptr<c10d::Store>& store, int rank) {
    return shm->create_group(store, rank, 2);
  };
}

torch::nn::Sequential make_model() {
  torch::manual_seed(42);
  return torch::nn::Sequential(torch::nn::Linear(8, 32), torch::nn::GELU(),
                               torch::nn::Linear(32, 32), torch::nn::GELU(),
                               torch::nn::Linear(32, 4));
}

std::pair<at::Tensor, at::Tensor> batch(int64_t rows) {
  torch::manual_seed(7);
  return {torch::randn({rows, 8}), torch::randint(0, 4, {rows})};
}

at::Tensor loss_of(torch::nn::Sequential& model, const at::Tensor& x, const at::Tensor& y) {
  return torch::nn::functional::cross_entropy(model->forward(x), y);
}

std::vector<at::Tensor> after_one_step(torch::nn::Sequential& model) {
  std::vector<at::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

void expect_close(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_LT((a[i] - b[i]).abs().max().item<double>(), tol) << "parameter " << i;
}

// SGD, not Adam: Adam's first step is lr * sign(g), which rounding can flip for gradients
// near zero, while SGD's update is linear in the gradient.
// Two ranks, each on its half of a 16-row batch in `micro_steps` accumulation steps; the
// all-reduce is armed only for the last micro-step's backward.
struct TwoRanks {
  std::vector<std::vector<at::Tensor>> parameters{2};  // after the step
  std::vector<size_t> buckets = {0, 0};
  std::vector<char> shared = {0, 0}, stop_voted = {0, 0};
};

// `voter`: the rank that votes to stop (-1: none).
TwoRanks train_two_ranks(int micro_steps, const GroupMaker& make_group = gloo_group,
                         int voter = -1) {
  const auto data = batch(16);
  const at::Tensor x = data.first, y = data.second;  // lambdas cannot capture bindings (C++17)
  auto store = c10::make_intrusive<c10d::HashStore>();
  TwoRanks out;
  // Built before the threads start: the global RNG is not meant for concurrent seeding.
  std::vector<torch::nn::Sequential> models{make_model(), make_model()};
  {
    torch::NoGradGuard no_grad;  // rank 1 starts elsewhere: the broadcast must fix that
    for (auto& p : models[1]->parameters()) p.add_(1.0);
  }
  auto rank_main = [&](int rank) {
    auto group = make_group(store, rank);
    auto& model = models[rank];
    // A tiny bucket cap forces several buckets, launched as gradients arrive.
    hlm::GradientSync sync(model->parameters(), group, /*bucket_cap_mb=*/0.002);
    out.buckets[rank] = sync.bucket_count();
    out.shared[rank] = sync.buckets_shared();
    sync.broadcast_parameters();
    torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
    const int64_t rows = 8 / micro_steps;
    for (int micro = 0; micro < micro_steps; ++micro) {
      if (micro + 1 == micro_steps) sync.prepare_for_backward(/*vote_stop=*/rank == voter);
      const int64_t first = rank * 8 + micro * rows;
      (loss_of(model, x.narrow(0, first, rows), y.narrow(0, first, rows)) / double(micro_steps))
          .backward();
    }
    sync.finish();
    out.stop_voted[rank] = sync.stop_voted();
    opt.step();
    out.parameters[rank] = after_one_step(model);
    // As the trainer ends (trainer.cpp): no rank tears its group down while the other may
    // still be in a collective with it.
    group->barrier()->wait();
  };
  std::thread other(rank_main, 1);
  rank_main(0);
  other.join();
  return out;
}

std::vector<at::Tensor> one_rank_whole_batch() {
  const auto [x, y] = batch(16);
  auto single = make_model();
  torch::optim::SGD opt(single->parameters(), torch::optim::SGDOptions(0.1));
  loss_of(single, x, y).backward();
  opt.step();
  return after_one_step(single);
}

TEST(GradientSync, TwoGlooRanksOnHalfBatchesMatchOneRankOnTheWholeBatch) {
  const TwoRanks ranks = train_two_ranks(1);
  EXPECT_GT(ranks.buckets[0], 1u);
  EXPECT_FALSE(ranks.shared[0]);
  EXPECT_FALSE(ranks.stop_voted[0] || ranks.stop_voted[1]) << "nobody voted to stop";
  const auto expected = one_rank_whole_batch();
  expect_close(ranks.parameters[0], expected, 1e-5);
  expect_close(ranks.parameters[1], expected, 1e-5);
}

TEST(GradientSync, AccumulationOverRanksSkipsEarlyMicroStepsAndMatchesTheWholeBatch) {
  const TwoRanks ranks = train_two_ranks(4);
  const auto expected = one_rank_whole_batch();
  expect_close(ranks.parameters[0], expected, 1e-5);
  expect_close(ranks.parameters[1], expected, 1e-5);
}

TEST(GradientSync, BucketsInSharedMemoryGiveTheSameUpdate) {
  for (int micro_steps : {1, 4}) {
    const TwoRanks ranks = train_two_ranks(micro_steps, shm_groups());
    EXPECT_TRUE(ranks.shared[0] && ranks.shared[1]);
    EXPECT_FALSE(ranks.stop_voted[0] || ranks.stop_voted[1]) << "nobody voted to stop";
    EXPECT_GT(ranks.buckets[0], 1u);
    const auto expected = one_rank_whole_batch();
    expect_close(ranks.parameters[0], expected, 1e-5);
    expect_close(ranks.parameters[1], expected, 1e-5);
    // The same reduction on both sides: the ranks' weights are equal to the bit.
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_TRUE(torch::equal(ranks.parameters[0][i], ranks.parameters[1][i]))
          << "parameter " << i;
  }
}

TEST(GradientSync, OneRanksStopVoteReachesEveryRank) {
  for (const GroupMaker& groups : {GroupMaker(gloo_group), shm_groups()}) {
    const TwoRanks ranks = train_two_ranks(1, groups, /*voter=*/1);
    EXPECT_TRUE(ranks.stop_voted[0]);
    EXPECT_TRUE(ranks.stop_voted[1]);
  }
}

}  // namespace

namespace {

// Buckets fill from the last parameter backwards; a tensor bigger than the cap is not split.
TEST(GradientSync, BucketsFillInReverseAndNeverSplitATensor) {
  const std::vector<at::Tensor> three = {torch::zeros({1000}), torch::zeros({1000}),
                                         torch::zeros({1000})};
  const double two_tensors_mb = 8000.0 / (1024 * 1024);
  EXPECT_EQ(hlm::assign_buckets(three, two_tensors_mb), (std::vector<size_t>{1, 0, 0}));
  EXPECT_EQ(hlm::assign_buckets(three, 0.0), (std::vector<size_t>{2, 1, 0}));  // one each
  EXPECT_EQ(hlm::assign_buckets({torch::zeros({10000})}, 0.0), (std::vector<size_t>{0}));
}

}  // namespace
