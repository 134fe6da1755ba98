// SPDX-License-Identifier: Apache-2.0
#include "base/closest_name.h"

#include <algorithm>

namespace vigil {

size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > 200) return "";
  // Short names allow one edit: "--nope" is two from "--once", a different word, not a typo.
  const size_t name = word.size() - std::min(word.find_first_not_of('-'), word.size());
  const size_t limit = name <= 4 ? 1 : std::max<size_t>(2, name / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (!best.empty()) return best;
  std::string prefixed;  // The only candidate that starts with `word` ("--dur" -> "--duration").
  for (const std::string& c : candidates) {
    if (word.size() < 3 || c.compare(0, word.size(), word) != 0) continue;
    if (!prefixed.empty()) return "";
    prefixed = c;
  }
  return prefixed;
}

}  // namespace vigil
