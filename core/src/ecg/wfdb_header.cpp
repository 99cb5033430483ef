// WFDB header (.hea) parsing: the record line, one line per signal, '#' comments.
// Field grammar and defaults follow the WFDB library's readheader (see hlm/wfdb.h).
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ecg/wfdb_internal.h"
#include "hlm/errors.h"
#include "hlm/util.h"
#include "hlm/wfdb.h"

namespace hlm::wfdb {
namespace {

struct Token {
  std::string text;
  size_t end = 0;  // offset just past the token in its line
};

std::vector<Token> split(const std::string& line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) tokens.push_back({line.substr(start, i - start), i});
  }
  return tokens;
}

// The same white space split() separates on (isspace): a line of form feeds is empty, not a
// line without fields (found by fuzzing: it indexed the first of no tokens).
std::string trim(const std::string& s) {
  const char* space = " \t\r\n\f\v";
  const size_t a = s.find_first_not_of(space);
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(space) - a + 1);
}

class LineParser {
 public:
  LineParser(const std::string& path, int line) : path_(path), line_(line) {}

  [[noreturn]] void fail(const std::string& problem, const std::string& hint) const {
    throw DataError("{}:{}: {} ({})", path_, line_, problem, hint);
  }

  long to_long(const std::string& text, const char* field) const {
    errno = 0;
    char* end = nullptr;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE)
      fail(std::string("expected an integer for ") + field + ", got '" + text + "'",
           "WFDB headers hold whole numbers in this field");
    return v;
  }

  // Leading number of `text`; `end` receives the rest.
  double leading_double(const char* text, const char** end, const char* field) const {
    char* stop = nullptr;
    const double v = std::strtod(text, &stop);
    if (stop == text)
      fail(std::string("expected a number for ") + field + ", got '" + text + "'",
           "see the WFDB header(5) format");
    *end = stop;
    return v;
  }

 private:
  const std::string& path_;
  int line_;
};

// "360", "360/1000(0)"
void parse_frequency(const LineParser& p, const std::string& text, Header& h) {
  const char* rest = nullptr;
  h.sampling_hz = p.leading_double(text.c_str(), &rest, "the sampling frequency");
  if (!(h.sampling_hz > 0.0))
    p.fail("sampling frequency must be positive, got '" + text + "'", "e.g. 360");
  // A sanity bound, not a tuned one: physiological records are sampled at well under 1 MHz
  // (PhysioNet's span from about 1 Hz to tens of kHz); beyond it, or infinite, the header is
  // corrupt and sample times computed from it would overflow.
  if (!(h.sampling_hz <= 1e6))
    p.fail("sampling frequency '" + text + "' is not plausible",
           "WFDB records are sampled "
           "below 1 MHz; fix the record line");
  if (*rest == '/') {
    h.counter_hz = p.leading_double(rest + 1, &rest, "the counter frequency");
    if (*rest == '(') h.base_counter = p.leading_double(rest + 1, &rest, "the base counter");
  }
  if (h.counter_hz <= 0.0) h.counter_hz = h.sampling_hz;
}

void parse_record_line(const LineParser& p, const std::string& line, Header& h, int* nsig) {
  const std::vector<Token> t = split(line);
  std::string name = t[0].text;
  const size_t slash = name.find('/');
  if (slash != std::string::npos)
    p.fail("multi-segment record '" + name + "' is not supported",
           "read its segment records one by one");
  h.record = name;
  if (t.size() < 2)
    p.fail("the record line has no signal count",
           "an old-style header; rewrite it with "
           "'name nsig fs nsamp'");
  *nsig = static_cast<int>(p.to_long(t[1].text, "the number of signals"));
  if (*nsig < 0) p.fail("negative number of signals " + t[1].text, "use 0 or more");
  h.counter_hz = 0.0;
  if (t.size() > 2) parse_frequency(p, t[2].text, h);
  if (h.counter_hz <= 0.0) h.counter_hz = h.sampling_hz;
  if (t.size() > 3) {
    h.frames = p.to_long(t[3].text, "the number of samples per signal");
    if (h.frames < 0) p.fail("negative number of samples " + t[3].text, "use 0 or more");
  }
  if (t.size() > 4) h.base_time = t[4].text;
  if (t.size() > 5) h.base_date = t[5].text;
}

// "212", "16+24", "212x2:1+512": format, then x samples per frame, : skew, + byte offset.
void parse_format(const LineParser& p, const std::string& text, SignalInfo& s) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) p.fail("unreadable signal format '" + text + "'", "e.g. 212 or 16+24");
  s.format = static_cast<int>(p.to_long(text.substr(0, i), "the signal format"));
  if (!is_wfdb_format(s.format))
    p.fail("unknown signal format " + std::to_string(s.format),
           "WFDB formats are 0 8 16 24 32 61 80 160 212 310 311 508 516 524");
  while (i < text.size()) {
    const char tag = text[i++];
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || (tag != 'x' && tag != ':' && tag != '+'))
      p.fail("unreadable format field '" + text + "'",
             "format[xsamples_per_frame][:skew][+byte_offset]");
    const long v = p.to_long(text.substr(i, j - i), "the format modifiers");
    if (tag == 'x') s.samples_per_frame = v < 1 ? 1 : static_cast<int>(v);
    if (tag == ':') s.skew = static_cast<int>(v);
    if (tag == '+') s.byte_offset = v;
    i = j;
  }
  // The header gives skew in samples; WFDB deskews in whole frames.
  s.skew = static_cast<int>(static_cast<double>(s.skew) / s.samples_per_frame + 0.5);
}

// "200", "166.945/mV", "1000(0)/mV"
void parse_gain(const LineParser& p, const std::string& text, SignalInfo& s, bool* baseline) {
  const char* rest = nullptr;
  s.gain = p.leading_double(text.c_str(), &rest, "the gain");
  if (*rest == '(') {
    char* stop = nullptr;
    s.baseline = static_cast<int>(std::strtol(rest + 1, &stop, 10));
    if (stop == rest + 1 || *stop != ')')
      p.fail("unreadable baseline in '" + text + "'", "gain(baseline)/units, e.g. 200(1024)/mV");
    *baseline = true;
    rest = stop + 1;
  }
  if (*rest == '/' && rest[1] != '\0') {
    s.units = rest + 1;
  } else if (*rest != '\0') {
    p.fail("unreadable gain '" + text + "'", "gain(baseline)/units, e.g. 200(1024)/mV");
  }
  if (!std::isfinite(s.gain))
    p.fail("gain '" + text + "' is not a finite number", "gain(baseline)/units, e.g. 200(1024)/mV");
  s.gain_given = s.gain != 0.0;
  if (!s.gain_given) s.gain = 200.0;  // uncalibrated: WFDB's default gain
}

SignalInfo parse_signal_line(const LineParser& p, const std::string& line, const Header& h,
                             bool* has_checksum) {
  const std::vector<Token> t = split(line);
  SignalInfo s;
  s.file_name = t[0].text;
  if (t.size() < 2) p.fail("signal line has no format", "e.g. '" + s.file_name + " 212'");
  parse_format(p, t[1].text, s);
  bool baseline_given = false;
  if (t.size() > 2)
    parse_gain(p, t[2].text, s, &baseline_given);
  else
    s.gain_given = false;
  s.adc_resolution = default_adc_resolution(s.format);
  if (t.size() > 3) {
    const long bits = p.to_long(t[3].text, "the ADC resolution");
    if (bits > 0) s.adc_resolution = static_cast<int>(bits);
  }
  if (t.size() > 4) s.adc_zero = static_cast<int>(p.to_long(t[4].text, "the ADC zero"));
  if (!baseline_given) s.baseline = s.adc_zero;
  s.initial_value =
      t.size() > 5 ? static_cast<int>(p.to_long(t[5].text, "the initial value")) : s.adc_zero;
  *has_checksum = t.size() > 6;
  if (*has_checksum) s.checksum = static_cast<int>(p.to_long(t[6].text, "the checksum"));
  if (t.size() > 7) s.block_size = static_cast<int>(p.to_long(t[7].text, "the block size"));
  if (t.size() > 8)
    s.description = trim(line.substr(t[7].end));
  else
    s.description = "record " + h.record + ", signal " + std::to_string(h.signals.size());
  return s;
}

}  // namespace

Header read_header(const std::string& hea_path) {
  // Headers are a few KiB (a multi-segment one some hundred).
  require_text_file(hea_path, uintmax_t(4) << 20, "a WFDB header");
  std::ifstream in(hea_path, std::ios::binary);
  if (!in)
    throw DataError("{}: cannot open the header (check the record name and directory)", hea_path);
  Header h;
  h.path = hea_path;
  int nsig = -1;
  int record_line = 0;
  int line_no = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string text = trim(line);
    if (text.empty()) continue;
    if (text[0] == '#') {
      h.comments.push_back(trim(text.substr(1)));
      continue;
    }
    const LineParser p(hea_path, line_no);
    if (nsig < 0) {
      record_line = line_no;
      parse_record_line(p, text, h, &nsig);
      continue;
    }
    if (static_cast<int>(h.signals.size()) == nsig)
      p.fail("the record line declares " + std::to_string(nsig) +
                 " signal(s) but more signal "
                 "lines follow",
             "fix the count on line " + std::to_string(record_line));
    bool has_checksum = false;
    SignalInfo s = parse_signal_line(p, text, h, &has_checksum);
    // Signals sharing a file are interleaved frame by frame, so they must share a format.
    if (!h.signals.empty() && h.signals.back().file_name == s.file_name &&
        h.signals.back().format != s.format)
      p.fail("signal " + std::to_string(h.signals.size()) + " is format " +
                 std::to_string(s.format) + " but the previous signal in " + s.file_name +
                 " is format " + std::to_string(h.signals.back().format),
             "signals stored in one file share one format");
    h.signals.push_back(std::move(s));
    h.checksum_given.push_back(has_checksum);
  }
  if (nsig < 0)
    throw DataError("{}: no record line (the header is empty or holds only comments)", hea_path);
  if (static_cast<int>(h.signals.size()) != nsig)
    LineParser(hea_path, record_line)
        .fail("the record line declares " + std::to_string(nsig) + " signal(s) but " +
                  std::to_string(h.signals.size()) + " signal line(s) follow",
              "fix the count or add the missing signal lines");
  return h;
}

}  // namespace hlm::wfdb
