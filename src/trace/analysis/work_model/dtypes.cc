// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/dtypes.h"

#include <utility>

namespace vigil::trace {

int BytesPerElement(std::string_view type) {
  static constexpr std::pair<std::string_view, int> kSizes[] = {
      {"double", 8},
      {"float", 4},
      {"c10::BFloat16", 2},
      {"c10::Half", 2},
      {"c10::Float8_e4m3fn", 1},
      {"c10::Float8_e5m2", 1},
      {"c10::Float8_e4m3fnuz", 1},
      {"c10::Float8_e5m2fnuz", 1},
      {"c10::Float8_e8m0fnu", 1},
      {"c10::Float4_e2m1fn_x2", 1},  // two FP4 values per byte
      {"long int", 8},
      {"long", 8},
      {"int", 4},
      {"short int", 2},
      {"short", 2},
      {"signed char", 1},
      {"unsigned char", 1},
      {"bool", 1},
      {"c10::complex<float>", 8},
      {"c10::complex<double>", 16},
      {"c10::complex<c10::Half>", 4},
  };
  for (const auto& [name, size] : kSizes) {
    if (name == type) return size;
  }
  return -1;
}

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace vigil::trace
