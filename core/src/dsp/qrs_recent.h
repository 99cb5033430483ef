// The QRS detector's running estimates: a ring of the last 8 values and their median.
#pragma once
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "dsp/small_select.h"

namespace hlm::dsp::qrs {

// A ring of the last 8 values; the median is recomputed only when a value changes.
template <class T>
struct Recent {
  T v[8];
  size_t next = 0;
  T med, low;  // the upper and the lower of the two middle values
  explicit Recent(T init) : med(init), low(init) { std::fill(v, v + 8, init); }
  // Puts x in place of the oldest value; returns what undo() needs to take it back.
  struct Pushed {
    size_t at;
    T old;
  };
  Pushed push(T x) {
    const Pushed p{next, v[next % 8]};
    v[next++ % 8] = x;
    update();
    return p;
  }
  // Puts back the value a push overwrote, unless 8 later pushes have already pushed it out.
  void undo(const Pushed& p) {
    if (next - p.at > 8) return;
    v[p.at % 8] = p.old;
    update();
  }
  void replace_last(T x) {
    v[(next + 7) % 8] = x;
    update();
  }
  T median() const { return med; }
  // The lower of the two middle values (median() is the upper one).
  T lower_median() const { return low; }
  double mean() const {
    double s = 0.0;
    for (const T& x : v) s += double(x);
    return s / 8.0;
  }

 private:
  void update() {
    T c[8];
    std::copy(v, v + 8, c);
    if constexpr (std::is_same_v<T, float>) {
      med = kth_smallest(c, 8, 4, &low);
    } else {
      std::nth_element(c, c + 4, c + 8);
      med = c[4];
      low = *std::max_element(c, c + 4);  // the four before c[4] are no larger
    }
  }
};

}  // namespace hlm::dsp::qrs
