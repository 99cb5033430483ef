// `hlm bench tokenize DIR`: the beat-vq pipeline's throughput per stage on a WFDB folder, as
// one JSON line (tools/bench/tokenize compares it with the Python peer).
#pragma once
#include <string>

namespace hlm {

// Runs the stages of the beat-vq tokenizer (plugins/tokenizers/beat_vq, default parameters)
// on every record of `dir`, calling hlm::dsp directly so that each stage can be timed: read
// (header, signals, annotations, leads in mV), filter (clean_ecg), detect (detect_qrs on lead
// 0, or on every lead with all_leads), window (64-point windows, RR, matched labels), then a
// k-means codebook of `codes` codes (fit, timed but excluded from the total) and assign
// (nearest code). Each stage runs over every record on `threads` threads (0 = one per core)
// before the next one starts, with every record in memory. Prints one JSON line: per stage its
// wall seconds and beats/s (beats detected / those seconds, measured on the machine); the
// total beats/s (beats / the stages' summed seconds, fit excluded); the detector's beats/s on
// one core (beats / detect CPU seconds); and bxb-style Se/+P against the .atr beats (not timed).
// Returns 0, or 1 when some record could not be read (named on stderr).
int bench_tokenize_command(const std::string& dir, int threads, int codes, bool all_leads);

}  // namespace hlm
