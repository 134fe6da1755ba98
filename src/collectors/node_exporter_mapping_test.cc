// SPDX-License-Identifier: Apache-2.0
// Checks docs/node_exporter_mapping.tsv, the table users port node_exporter dashboards with:
// every Vigil family it names is declared by the collector it names, its label names are valid,
// each node_exporter family is listed once, and the table in docs/metrics.md ("Porting from
// node_exporter") has exactly the file's rows.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "collectors/all_collectors.h"
#include "metrics/naming.h"

namespace vigil {
namespace {

struct Row {
  std::string ne_collector, ne_family, vigil, vigil_collector, conversion;
  bool operator==(const Row&) const = default;
};

std::string DocsPath(std::string_view name) {
  return std::string(VIGIL_TEST_DATA_DIR) + "/../../docs/" + std::string(name);
}

std::vector<Row> LoadMapping() {
  StatusOr<std::string> text = ReadSmallFile(DocsPath("node_exporter_mapping.tsv"));
  EXPECT_TRUE(text.ok()) << text.status().message();
  std::vector<Row> rows;
  if (!text.ok()) {
    return rows;
  }
  std::string_view rest = *text;
  std::string_view line;
  while (NextLine(&rest, &line)) {
    if (line.empty() || line.front() == '#') {
      continue;
    }
    std::vector<std::string_view> cols = Split(line, '\t');
    EXPECT_EQ(cols.size(), 5u) << line;
    if (cols.size() == 5) {
      rows.push_back({std::string(cols[0]), std::string(cols[1]), std::string(cols[2]),
                      std::string(cols[3]), std::string(cols[4])});
    }
  }
  return rows;
}

std::string Unquote(std::string_view cell) {
  cell = Trim(cell);
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`') {
    cell = cell.substr(1, cell.size() - 2);
  }
  return std::string(cell);
}

// The rows of the table under "## Porting from node_exporter", as the TSV spells them.
std::vector<Row> LoadDocTable() {
  StatusOr<std::string> text = ReadSmallFile(DocsPath("metrics.md"));
  EXPECT_TRUE(text.ok()) << text.status().message();
  std::vector<Row> rows;
  if (!text.ok()) {
    return rows;
  }
  std::string_view rest = *text;
  std::string_view line;
  bool in_section = false;
  while (NextLine(&rest, &line)) {
    if (line.starts_with("## ")) {
      in_section = line == "## Porting from node_exporter";
      continue;
    }
    if (!in_section || !line.starts_with("| ") || line.starts_with("| node_exporter collector")) {
      continue;
    }
    std::vector<std::string_view> cells = Split(line.substr(1, line.size() - 2), '|');
    EXPECT_EQ(cells.size(), 5u) << line;
    if (cells.size() != 5) {
      continue;
    }
    Row row{Unquote(cells[0]), Unquote(cells[1]), Unquote(cells[2]), Unquote(cells[3]),
            std::string(Trim(cells[4]))};
    if (row.vigil == "(none)") {
      row.vigil = "-";
      row.vigil_collector = "-";
    }
    rows.push_back(row);
  }
  return rows;
}

const CollectorInfo* FindCollector(std::string_view name) {
  for (const CollectorInfo* info : AllCollectors()) {
    if (info->name == name) {
      return info;
    }
  }
  return nullptr;
}

TEST(NodeExporterMappingTest, EveryVigilFamilyIsDeclaredByItsCollector) {
  const std::vector<Row> rows = LoadMapping();
  ASSERT_FALSE(rows.empty());
  for (const Row& row : rows) {
    SCOPED_TRACE(row.ne_family);
    EXPECT_TRUE(row.ne_family.starts_with("node_"));
    if (row.vigil == "-") {
      EXPECT_EQ(row.vigil_collector, "-");
      continue;
    }
    const size_t brace = row.vigil.find('{');
    const std::string family = row.vigil.substr(0, brace);
    const CollectorInfo* info = FindCollector(row.vigil_collector);
    ASSERT_NE(info, nullptr) << "no collector " << row.vigil_collector;
    bool declared = false;
    for (const MetricDesc* desc : info->metrics) {
      declared = declared || desc->name == family;
    }
    EXPECT_TRUE(declared) << row.vigil_collector << " does not declare " << family;
    if (brace == std::string::npos) {
      continue;
    }
    ASSERT_EQ(row.vigil.back(), '}');
    for (std::string_view pair :
         Split(std::string_view(row.vigil).substr(brace + 1, row.vigil.size() - brace - 2), ',')) {
      const size_t eq = pair.find('=');
      ASSERT_NE(eq, std::string_view::npos) << pair;
      EXPECT_TRUE(CheckLabelName(pair.substr(0, eq)).ok()) << pair;
      std::string_view value = pair.substr(eq + 1);
      EXPECT_TRUE(value.size() >= 2 && value.front() == '"' && value.back() == '"') << pair;
    }
  }
}

TEST(NodeExporterMappingTest, EachNodeExporterFamilyIsListedOnce) {
  std::set<std::string> seen;
  for (const Row& row : LoadMapping()) {
    EXPECT_TRUE(seen.insert(row.ne_family).second) << row.ne_family << " is listed twice";
  }
}

TEST(NodeExporterMappingTest, MetricsDocTableMatchesTheMappingFile) {
  const std::vector<Row> tsv = LoadMapping();
  const std::vector<Row> doc = LoadDocTable();

  ASSERT_EQ(doc.size(), tsv.size())
      << "regenerate the table with tools/node_exporter_mapping.py --write-doc";
  for (size_t i = 0; i < tsv.size(); ++i) {
    EXPECT_EQ(doc[i], tsv[i]) << "row " << i << ": " << tsv[i].ne_family;
  }
}

}  // namespace
}  // namespace vigil
