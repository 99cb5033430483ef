// Score tables (see score_table.h).
#include "eval/score_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>

#include "hlm/errors.h"

namespace hlm::eval {
namespace {

std::string interval(const Interval& ci) {
  return std::isnan(ci.low) ? "" : " (" + score_text(ci.low) + "-" + score_text(ci.high) + ")";
}

// A difference's interval, signs shown: " (-0.012 to +0.034)".
std::string signed_interval(const Interval& ci) {
  if (std::isnan(ci.low)) return "";
  char text[64];
  std::snprintf(text, sizeof(text), " (%+.3f to %+.3f)", ci.low, ci.high);
  return text;
}

std::optional<size_t> index_of(const std::vector<std::string>& names, const char* name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return size_t(it - names.begin());
}

}  // namespace

std::string score_text(double v) {
  if (std::isnan(v)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", v);
  return text;
}

std::string score_table(const std::vector<Confusion>& per_record,
                        const std::vector<std::string>& class_names, nlohmann::json& results) {
  const size_t classes = class_names.size();
  Confusion m(classes);
  for (const auto& r : per_record) m += r;
  const auto ci = [&](const std::function<double(const Confusion&)>& metric) {
    return bootstrap_by_record(per_record, metric);
  };
  const double acc = accuracy(m), macro = macro_f1(m);
  const Interval accuracy_ci = ci(accuracy), macro_f1_ci = ci(macro_f1);
  // What answering the most frequent reference class every time would score: accuracy means
  // little without it when one class dominates (N is ~80-90 % of most records).
  const size_t majority = majority_class(m);
  const double baseline = majority_baseline(m);
  const Confusion baseline_matrix = always_answering(m, majority);
  const double baseline_macro_f1 = macro_f1(baseline_matrix);
  results["items"] = m.total();
  results["records"] = per_record.size();
  results["accuracy"] = acc;
  results["macro_f1"] = macro;
  results["ci95"] = {{"accuracy", {accuracy_ci.low, accuracy_ci.high}},
                     {"macro_f1", {macro_f1_ci.low, macro_f1_ci.high}}};
  results["majority_class"] = class_names[majority];
  results["majority_baseline"] = baseline;
  results["majority_baseline_macro_f1"] = baseline_macro_f1;
  // The classifier against that baseline on the same resampled records (paired): the records'
  // difficulty cancels, so an interval above 0 says it beats the baseline beyond
  // record-to-record chance, which two overlapping intervals side by side cannot say.
  std::vector<Confusion> always_majority;
  for (const auto& r : per_record) always_majority.push_back(always_answering(r, majority));
  const Interval over_ci = bootstrap_difference_by_record(per_record, always_majority, accuracy);
  results["accuracy_over_baseline"] = {{"value", acc - baseline},
                                       {"ci95", {over_ci.low, over_ci.high}}};
  // Each class's F1 beside the baseline's: every table shows what always answering the
  // majority class scores.
  const std::string always = "always " + class_names[majority];
  std::string md =
      "| class | items | Se | +P | Sp | F1 | F1, " + always + " |\n|---|---|---|---|---|---|---|\n";
  for (size_t c = 0; c < classes; ++c) {
    const ClassScores s = class_scores(m, c);
    const Interval se_ci = ci([c](const Confusion& r) { return class_scores(r, c).se; });
    const Interval ppv_ci = ci([c](const Confusion& r) { return class_scores(r, c).ppv; });
    results["classes"][class_names[c]] = {{"items", s.support},
                                          {"se", s.se},
                                          {"ppv", s.ppv},
                                          {"specificity", s.specificity},
                                          {"f1", s.f1},
                                          {"se_ci95", {se_ci.low, se_ci.high}},
                                          {"ppv_ci95", {ppv_ci.low, ppv_ci.high}}};
    md += "| " + class_names[c] + " | " + std::to_string(s.support) + " | " + score_text(s.se) +
          interval(se_ci) + " | " + score_text(s.ppv) + interval(ppv_ci) + " | " +
          score_text(s.specificity) + " | " + score_text(s.f1) + " | " +
          score_text(class_scores(baseline_matrix, c).f1) + " |\n";
  }
  char head[560];
  std::snprintf(head, sizeof(head),
                "Accuracy %s%s, macro F1 %s%s, on %lld items of %zu records; always answering %s "
                "would score %s (macro F1 %s), %+.3f%s against it (paired: the same records drawn "
                "for both). Intervals: 95 %%, from 1000 resamples of the records.\n\n",
                score_text(acc).c_str(), interval(accuracy_ci).c_str(), score_text(macro).c_str(),
                interval(macro_f1_ci).c_str(), (long long)m.total(), per_record.size(),
                class_names[majority].c_str(), score_text(baseline).c_str(),
                score_text(baseline_macro_f1).c_str(), acc - baseline,
                signed_interval(over_ci).c_str());
  md = head + md + "\nConfusion matrix (rows: reference, columns: predicted)\n\n|";
  for (const auto& name : class_names) md += " | " + name;
  md += " |\n|---|";
  for (size_t c = 0; c < classes; ++c) md += "---|";
  md += "\n";
  for (size_t t = 0; t < classes; ++t) {
    md += "| " + class_names[t];
    for (size_t p = 0; p < classes; ++p) md += " | " + std::to_string(m.at(t, p));
    md += " |\n";
  }
  results["confusion"] = confusion_rows(m);
  return md;
}

std::optional<std::vector<size_t>> ec57_excused(const std::vector<std::string>& class_names,
                                                const std::string& ectopic) {
  const auto f = index_of(class_names, "F"), q = index_of(class_names, "Q");
  if (!index_of(class_names, "N") || !index_of(class_names, "S") || !index_of(class_names, "V") ||
      !f || (ectopic != "S" && ectopic != "V"))
    return std::nullopt;
  std::vector<size_t> excused;
  if (ectopic == "V") excused.push_back(*f);
  if ((ectopic == "V" || ectopic == "S") && q) excused.push_back(*q);
  return excused;
}

std::string ec57_table(const std::vector<Confusion>& per_record,
                       const std::vector<std::string>& class_names, nlohmann::json& results) {
  const auto s = index_of(class_names, "S"), v = index_of(class_names, "V");
  if (!index_of(class_names, "N") || !s || !v || !index_of(class_names, "F")) return "";
  const std::vector<size_t> q_only = *ec57_excused(class_names, "S"),
                            f_and_q = *ec57_excused(class_names, "V");
  const Confusion all = pooled(per_record, class_names.size());
  std::string md =
      "\nV and S as AAMI EC57 counts them (WFDB's bxb), over the beats scored above (bxb also "
      "counts beats the detector missed or added): fusion and Q beats called V are not false "
      "V, nor Q beats called S. FPR: false positives over all beats outside the class's row "
      "and column.\n\n| class | Se | +P | FPR |\n|---|---|---|---|\n";
  for (const auto& [name, cls, excused] :
       {std::tuple{"V", *v, f_and_q}, std::tuple{"S", *s, q_only}}) {
    const EctopicScores e = ectopic_scores(all, cls, excused);
    const auto ci = [&per_record, c = cls, x = excused](double EctopicScores::*field) {
      return bootstrap_by_record(
          per_record, [&](const Confusion& m) { return ectopic_scores(m, c, x).*field; });
    };
    const Interval se_ci = ci(&EctopicScores::se), ppv_ci = ci(&EctopicScores::ppv);
    results["ec57"][name] = {{"se", e.se},
                             {"ppv", e.ppv},
                             {"fpr", e.fpr},
                             {"se_ci95", {se_ci.low, se_ci.high}},
                             {"ppv_ci95", {ppv_ci.low, ppv_ci.high}}};
    md += std::string("| ") + name + " | " + score_text(e.se) + interval(se_ci) + " | " +
          score_text(e.ppv) + interval(ppv_ci) + " | " + score_text(e.fpr) + " |\n";
  }
  const size_t majority = majority_class(all);
  const Confusion baseline = always_answering(all, majority);
  for (const auto& [name, cls, excused] :
       {std::tuple{"V", *v, f_and_q}, std::tuple{"S", *s, q_only}}) {
    const EctopicScores e = ectopic_scores(baseline, cls, excused);
    md += std::string("| ") + name + ", always " + class_names[majority] + " | " +
          score_text(e.se) + " | " + score_text(e.ppv) + " | " + score_text(e.fpr) + " |\n";
  }
  return md;
}

std::string published_points_table(const ProbabilityItems& items,
                                   const std::vector<std::string>& class_names,
                                   const std::vector<PublishedPoint>& points,
                                   nlohmann::json& results) {
  if (points.empty()) return "";
  std::string md =
      "\nAt each published method's operating point: the highest Se this run reaches with the "
      "figure the method reports beside Se (+P or specificity, Sp) held at least as high, when "
      "one class's probability is multiplied by a factor before the most probable class is "
      "taken. The factor is read off these very items, so this is a property of the curve (as "
      "AUROC is), not an operating point fixed in advance; the interval resamples records. S "
      "and V of the AAMI beat classes count as EC57 does.\n\n| source | class | published Se "
      "| held at | Se there (95 % CI) | +P | Sp | factor | accuracy there "
      "|\n|---|---|---|---|---|---|---|---|---|\n";
  results["at_published_points"] = nlohmann::json::array();
  for (const PublishedPoint& point : points) {
    const auto cls = index_of(class_names, point.class_name.c_str());
    if (!cls)
      throw ConfigError("published point of '{}': class '{}' is not one of the model's classes",
                        point.source, point.class_name);
    const auto ec57 = ec57_excused(class_names, point.class_name);
    const PointOnCurve p = sensitivity_at(items, *cls, ec57.value_or(std::vector<size_t>()),
                                          point.held, point.held_value);
    results["at_published_points"].push_back({{"source", point.source},
                                              {"class", point.class_name},
                                              {"held", held_name(point.held)},
                                              {"published_se", point.se},
                                              {"published_held", point.held_value},
                                              {"reached", p.reached},
                                              {"se", p.se},
                                              {"se_ci95", {p.se_ci95.low, p.se_ci95.high}},
                                              {"ppv", p.ppv},
                                              {"specificity", p.specificity},
                                              {"factor", p.factor},
                                              {"accuracy", p.accuracy},
                                              {"count", ec57 ? "EC57" : "one against the rest"}});
    // Se is NaN without items of the class or, with specificity held, without any outside it.
    const bool has_class = std::count(items.truth.begin(), items.truth.end(), *cls) > 0;
    const std::string se =
        !std::isnan(p.se) ? (p.reached ? score_text(p.se) + interval(p.se_ci95) : "not reached")
        : has_class       ? "no items outside " + point.class_name
                          : "no " + point.class_name + " items";
    md += "| " + point.source + " | " + point.class_name + " | " + score_text(point.se) + " | " +
          (point.held == Held::kPpv ? "+P " : "Sp ") + score_text(point.held_value) + " | " + se +
          " | " + score_text(p.ppv) + " | " + score_text(p.specificity) + " | " +
          score_text(p.factor) + " | " + score_text(p.accuracy) + " |\n";
  }
  // The majority-class baseline for each class the points name: no factor moves it.
  Confusion reference(class_names.size());
  for (const size_t t : items.truth) reference.add(t, t);
  const size_t majority = majority_class(reference);
  const Confusion baseline = always_answering(reference, majority);
  std::vector<size_t> named;
  for (const PublishedPoint& point : points)
    if (const size_t c = *index_of(class_names, point.class_name.c_str());
        std::find(named.begin(), named.end(), c) == named.end())
      named.push_back(c);
  for (const size_t c : named) {
    const ClassScores k = class_scores(baseline, c);
    md += "| always " + class_names[majority] + " (the majority baseline) | " + class_names[c] +
          " | | | " + score_text(k.se) + " | " + score_text(k.ppv) + " | " +
          score_text(k.specificity) + " | | " + score_text(accuracy(baseline)) + " |\n";
  }
  return md;
}

nlohmann::json confusion_rows(const Confusion& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t t = 0; t < m.classes(); ++t) {
    std::vector<int64_t> row;
    for (size_t p = 0; p < m.classes(); ++p) row.push_back(m.at(t, p));
    rows.push_back(row);
  }
  return rows;
}

}  // namespace hlm::eval
