// The QRS detector's decision stage: which candidate peaks of the fused envelope are beats.
#pragma once
#include <vector>

#include "dsp/qrs_envelope.h"
#include "hlm/dsp/qrs.h"

namespace hlm::dsp::qrs {

// Walks the candidates in time order with thresholds between the medians of the last 8 QRS
// and noise peak heights, a refractory period, a T-wave slope check and search-back.
std::vector<Candidate> decide(const std::vector<Candidate>& cand, const QrsOptions& options);

}  // namespace hlm::dsp::qrs
