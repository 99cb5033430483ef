// Reader for PhysioNet WFDB records: .hea headers, signal files (formats 8, 16, 24, 32, 61, 80,
// 160, 212, 310, 311, and `16+24` inside Challenge 2017 .mat files) and MIT annotation files.
// Results match the WFDB Software Package's rdsamp and rdann.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlm/ecg.h"

namespace hlm::wfdb {

// A parsed .hea file. Field defaults follow WFDB: sampling 250 Hz, counter frequency = sampling
// frequency, baseline = ADC zero, initial value = ADC zero, ADC resolution from the format
// when absent or 0.
struct Header {
  std::string record;  // record name as written on the record line
  std::string path;    // the .hea file read, for error messages
  double sampling_hz = 250.0;
  double counter_hz = 0.0;  // = sampling_hz when the header gives none
  double base_counter = 0.0;
  int64_t frames = 0;  // 0 when the header omits it (then derived from the file size)
  std::vector<SignalInfo> signals;
  // Per signal: the header had a checksum field. Only nonzero checksums are verified, since
  // some databases (Challenge 2017) write 0 for "not computed".
  std::vector<bool> checksum_given;
  std::vector<std::string> comments;  // '#' lines without the '#', trimmed
  std::string base_time;              // "hh:mm:ss[.ms]" or ""
  std::string base_date;              // "dd/mm/yyyy" or ""
};

// Parses a header. Throws hlm::DataError "file:line: problem (hint)" for a malformed line, a
// wrong signal count, an unknown format, or a multi-segment record (not supported).
// A gain of 0 or a missing gain means "uncalibrated": gain is set to 200 and gain_given false.
Header read_header(const std::string& hea_path);

// Reads an MIT-format annotation file (.atr, .qrs, ...), applying SKIP, NUM, SUB, CHN and AUX
// pseudo-annotations as WFDB's getann does (num and chan carry over to later annotations;
// subtype and aux do not). Annotations stay in file order. Throws hlm::DataError naming the
// file and the byte offset when the file is truncated or corrupt.
std::vector<Annotation> read_annotations(const std::string& path);

struct ReadOptions {
  std::string annotator = "atr";  // "" reads no annotations; a missing file gives none
  bool read_signals = true;       // false: header and annotations only (digital stays empty)
  bool verify_checksums = true;   // logs a warning (spdlog) per signal whose sum differs
  // Where the rhythm changes come from, when not from `annotator`'s file: some databases keep
  // beats and rhythm apart (afdb: beats in .qrs, rhythm in .atr). Non-empty: the rhythm changes
  // (code 28) of name.<rhythm_annotator> replace any in the beats' file, merged by sample; its
  // other annotations are not read. A record without that file, or whose file holds no rhythm
  // change, is a DataError.
  std::string rhythm_annotator{};
};

// Reads record `name` from `dir`. Record::digital[s] holds frames * samples_per_frame values
// of signal s (all samples of multi-frequency signals), kInvalidSample where WFDB marks a
// sample invalid; skew is applied (samples past the end of the file are invalid).
// Annotation-only records (the header names signal files, none of which exist, as in ltafdb)
// come back with `signals` described and `digital` empty. Throws hlm::DataError naming the file
// and the problem: truncated signal file, some but not all signal files missing, unsupported
// format, corrupt annotations.
Record read_record(const std::string& dir, const std::string& name,
                   const ReadOptions& options = {});

// Record names in `dir`: the RECORDS file's entries that have a header when RECORDS exists,
// otherwise the names of all *.hea files; sorted.
std::vector<std::string> list_records(const std::string& dir);

// The entries of dir/RECORDS as written (blank and '#' lines left out, spaces trimmed), in
// order; nullopt when there is no RECORDS file.
std::optional<std::vector<std::string>> records_file_entries(const std::string& dir);

// The names of the *.hea files in dir (regular files), in directory order.
std::vector<std::string> header_names(const std::string& dir);

// The mnemonic rdann prints for an MIT annotation code: "N", "V", "+", "~", "[15]", ...
const char* annotation_mnemonic(uint8_t code);

// Elapsed time as rdann prints it ("0:00.025", "1:02:03.500"): sample / sampling_hz, rounded
// to the millisecond.
std::string elapsed_time_string(int64_t sample, double sampling_hz);

// True for the signal formats read_record can decode.
bool is_supported_format(int format);

}  // namespace hlm::wfdb
