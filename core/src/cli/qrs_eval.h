// `hlm qrs-eval DIR [RECORD ...]`: scores the QRS detector against a WFDB database's reference
// beat annotations the way WFDB's bxb does (150 ms match window, whole record, nothing compared
// inside ventricular flutter or fibrillation episodes, as AAMI EC57 prescribes).
#pragma once
#include <string>
#include <vector>

namespace hlm {

struct QrsEvalOptions {
  int threads = 0;  // records scored in parallel (0 = one per core)
  int lead = -1;    // detect on this lead alone (as beat-vq does by default); < 0: every lead
  std::string errors_csv;  // also write every missed beat and false detection here
  // Score each record carried to this rate first (hlm/dsp/resample.h), its annotations moved
  // with it: the same hearts at a rate they were not recorded at. 0: each record's own rate.
  double rate_hz = 0.0;
  // The reference annotations' file suffix (bxb's reference annotator): NAME.atr by default;
  // some databases keep their beats elsewhere (afdb has only rhythm changes in .atr).
  std::string annotator = "atr";
};

// Reads each record (all of DIR's when `records` is empty) with its reference annotations
// (NAME.atr, or the `annotator` file), detects
// beats with hlm::dsp::detect_qrs on all its leads or on one lead, and prints one line per
// record (TP, FN, FP, Se, +P) and then `gross TP=<n> FN=<n> FP=<n> Se=<percent> +P=<percent>`
// over the records scored. Records run on `threads` threads; the output is in record order. A
// record that cannot be read, has no signals or no reference beat (no annotation file, or one
// of rhythm changes only) is reported on stderr and left out of the gross line. With `errors_csv`,
// every missed reference beat and every false detection is also written there, one row each
// (record, sample, seconds, missed|false, the missed beat's annotation mnemonic; samples at the
// rate scored), as bxb's beat-by-beat listing does. Returns 0 when every record was scored, 1
// otherwise.
int qrs_eval_command(const std::string& dir, const std::vector<std::string>& records,
                     const QrsEvalOptions& options);

}  // namespace hlm
