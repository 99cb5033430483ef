// The window sampler: one store draws the windows it always drew; several stores (a
// foundation's beat and rhythm tokens) share the windows by weight, and no window spans two.
#include <gtest/gtest.h>

#include <filesystem>

#include "hlm/errors.h"
#include "hlm/token_store.h"
#include "support/hlm_cli.h"
#include "train/window_sampler.h"

namespace {

using hlm::test::ScratchDir;

// `n` tokens all equal to `token`, in one record.
std::string write_store(const std::filesystem::path& dir, const std::string& name, uint32_t token,
                        uint32_t n) {
  const std::string path = (dir / (name + ".hlmt")).string();
  hlm::Beats beats;
  beats.record = name;
  beats.sampling_hz = 250;
  for (uint32_t i = 0; i < n; ++i) {
    beats.positions.push_back(int64_t(100 + 200 * i));
    beats.rr_seconds.push_back(0.8f);
    beats.labels.push_back(0);
    beats.tokens.push_back(token);
  }
  hlm::TokenStoreWriter writer(path, 40, "test-tokens");
  writer.append(beats);
  writer.finish();
  return path;
}

TEST(WindowSampler, OneSpanDrawsTheWindowsOfOneStore) {
  ScratchDir dir("hlm_window_sampler");
  const auto store = hlm::TokenStore::open(write_store(dir.path, "a", 5, 1000));
  const hlm::WindowSampler one(store, 10, 900, 16, 7);
  const hlm::WindowSampler spans({{&store, 10, 900, 3.0}}, 16, 7);
  for (uint64_t i = 0; i < 200; ++i) {
    EXPECT_EQ(one.window(i).start, spans.window(i).start);
    EXPECT_GE(one.window(i).start, 10u);
    EXPECT_LE(one.window(i).start + 17, 900u);
  }
}

TEST(WindowSampler, StoresShareTheWindowsByWeightAndNoWindowMixesThem) {
  ScratchDir dir("hlm_window_sampler_two");
  const auto beats = hlm::TokenStore::open(write_store(dir.path, "beats", 5, 300));
  const auto rhythm = hlm::TokenStore::open(write_store(dir.path, "rhythm", 30, 30000));
  const hlm::WindowSampler s({{&beats, 0, 300, 1.0}, {&rhythm, 0, 30000, 3.0}}, 16, 11);
  auto inputs = torch::empty({4000, 16}, torch::kLong);
  auto targets = torch::empty({4000, 16}, torch::kLong);
  s.fill(0, inputs, targets);
  const auto from_beats = inputs.eq(5).all(1);
  const auto from_rhythm = inputs.eq(30).all(1);
  EXPECT_TRUE(from_beats.logical_or(from_rhythm).all().item<bool>());
  const double share = from_beats.to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(share, 0.25, 0.03);                     // weight 1 of 4, whatever the stores' sizes
  EXPECT_EQ(s.window(123).span, s.window(123).span);  // a pure function of the sample
}

TEST(WindowSampler, RefusesAStoreWithoutAWindowNamingIt) {
  ScratchDir dir("hlm_window_sampler_small");
  const auto small = hlm::TokenStore::open(write_store(dir.path, "small", 5, 10));
  const auto big = hlm::TokenStore::open(write_store(dir.path, "big", 5, 1000));
  try {
    hlm::WindowSampler({{&big, 0, 1000, 1.0}, {&small, 0, 10, 1.0}}, 16, 1);
    FAIL() << "no error";
  } catch (const hlm::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("small.hlmt"), std::string::npos) << e.what();
  }
}

}  // namespace
