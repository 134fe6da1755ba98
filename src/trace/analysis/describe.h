// SPDX-License-Identifier: Apache-2.0
// pandas' describe() of a list of numbers (count, mean, sample standard deviation, min, the
// quartiles by linear interpolation, max): the summary Holistic Trace Analysis prints for its
// counter time series, so our summaries compare with its tables number for number.
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace vigil::trace {

struct Describe {
  uint64_t count = 0;
  double mean = 0;
  double std = 0;  // sample (n - 1) standard deviation; NaN for one value, as in pandas
  double min = 0;
  double p25 = 0;
  double p50 = 0;
  double p75 = 0;
  double max = 0;
};

// Sorts a copy; an empty input gives count 0 and zeros.
Describe DescribeValues(std::vector<double> values);

// The same summary of integer values given as a histogram (value -> how many times), for long
// series of few distinct values (queue lengths) that need not be kept.
Describe DescribeCounts(const std::map<int64_t, uint64_t>& counts);

}  // namespace vigil::trace
