// `hlm qrs-eval DIR [RECORD ...]`: scores the QRS detector against a WFDB database's reference
// beat annotations the way WFDB's bxb does (150 ms match window, whole record, nothing compared
// inside ventricular flutter or fibrillation episodes, as AAMI EC57 prescribes).
#pragma once
#include <string>
#include <vector>

namespace hlm {

// Reads each record (all of DIR's when `records` is empty) with its .atr annotations, detects
// beats with hlm::dsp::detect_qrs on all its leads (lead < 0) or on one lead (as the beat-vq
// tokenizer does by default), and prints one line per record (TP, FN,
// FP, Se, +P) and then `gross TP=<n> FN=<n> FP=<n> Se=<percent> +P=<percent>` over the records
// scored. Records run on `threads` threads (0 = one per core); the output is in record order.
// A record that cannot be read or has no signals is reported on stderr and left out of the
// gross line. With `errors_csv`, every missed reference beat and every false detection is also
// written there, one row each (record, sample, seconds, missed|false, the missed beat's
// annotation mnemonic), as bxb's beat-by-beat listing does. Returns 0 when every record was
// scored, 1 otherwise.
int qrs_eval_command(const std::string& dir, const std::vector<std::string>& records, int threads,
                     int lead = -1, const std::string& errors_csv = "");

}  // namespace hlm
