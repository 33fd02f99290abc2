#include "sim/config/suggest.h"

#include <algorithm>

namespace npusim::config {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: Levenshtein plus the swap of two neighbours.
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  // Dashes do not count towards the word's length: "--ring-hep" is 8 letters.
  const std::size_t letters = word.size() - std::min(word.find_first_not_of('-'), word.size());
  const std::size_t allowed = std::clamp<std::size_t>(letters / 3, 1, 3);
  std::string best;
  std::size_t best_d = allowed + 1;
  for (const std::string& c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_d) best = c, best_d = dist;
  }
  if (!best.empty() || letters < 3) return best;
  std::vector<std::string> starts;
  for (const std::string& c : candidates)
    if (c.compare(0, word.size(), word) == 0) starts.push_back(c);
  return starts.size() == 1 ? starts.front() : "";
}

}  // namespace npusim::config
