// The forms of a record's premature beats (qrs_ectopic_forms.h): a wave matches when two kept
// forms are alike in shape and not too far in size; one form (even matched twice), another
// shape, or a size beyond kScale does not.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dsp/qrs_ectopic_forms.h"

namespace {

using hlm::dsp::qrs::EctopicForms;

// A biphasic wave of 21 samples, `size` times as large, `shift` samples later.
std::vector<float> wave(float size, int shift = 0) {
  std::vector<float> w(21);
  for (int k = 0; k < 21; ++k) {
    const float t = float(k - 10 - shift) / 3.0f;
    w[size_t(k)] = size * t * std::exp(-t * t / 2.0f);
  }
  return w;
}

// A slow hump, as a T wave's tail, of the same size.
std::vector<float> hump(float size) {
  std::vector<float> w(21);
  for (int k = 0; k < 21; ++k) w[size_t(k)] = size * std::exp(-float((k - 10) * (k - 10)) / 60.0f);
  return w;
}

TEST(EctopicForms, AWaveMatchesTwoKeptFormsOfItsShape) {
  EctopicForms forms;
  forms.add(wave(1.0f));
  EXPECT_FALSE(forms.matches({wave(1.0f)})) << "one form kept";
  forms.add(wave(1.2f));
  EXPECT_TRUE(forms.matches({wave(0.8f)}));
  // Read at several places about its peak, one of which is the kept forms' own.
  EXPECT_TRUE(forms.matches({wave(1.0f, 3), wave(1.0f, 0), wave(1.0f, -3)}));
  EXPECT_FALSE(forms.matches({wave(1.0f, 3)})) << "read only away from its peak";
}

// Two readings of the wave that match the same kept form are one match, not two.
TEST(EctopicForms, OneKeptFormMatchedTwiceIsNotEnough) {
  EctopicForms forms;
  forms.add(wave(1.0f));
  forms.add(hump(1.0f));
  EXPECT_FALSE(forms.matches({wave(1.0f), wave(1.1f)}));
  forms.add(wave(0.9f));
  EXPECT_TRUE(forms.matches({wave(1.0f), wave(1.1f)}));
}

TEST(EctopicForms, AnotherShapeOrSizeDoesNotMatch) {
  EctopicForms forms;
  forms.add(wave(1.0f));
  forms.add(wave(1.0f));
  EXPECT_FALSE(forms.matches({hump(1.0f)}));
  EXPECT_FALSE(forms.matches({wave(-1.0f)})) << "inverted";
  EXPECT_FALSE(forms.matches({wave(EctopicForms::kScale * 1.1f)}));
  EXPECT_FALSE(forms.matches({wave(1.0f / (EctopicForms::kScale * 1.1f))}));
  EXPECT_TRUE(forms.matches({wave(EctopicForms::kScale * 0.9f)}));
  EXPECT_FALSE(forms.matches({}));
  forms.clear();
  EXPECT_FALSE(forms.matches({wave(1.0f)}));
}

TEST(EctopicForms, KeepsTheNewestFormsOnly) {
  EctopicForms forms;
  forms.add(wave(1.0f));
  forms.add(wave(1.0f));
  for (size_t k = 0; k < EctopicForms::kForms; ++k) forms.add(hump(1.0f));
  EXPECT_FALSE(forms.matches({wave(1.0f)}));
  EXPECT_TRUE(forms.matches({hump(1.0f)}));
  forms.add({});  // nothing to keep
  forms.add(std::vector<float>(21, 0.0f));
  EXPECT_TRUE(forms.matches({hump(1.0f)}));
}

}  // namespace
