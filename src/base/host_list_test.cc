// SPDX-License-Identifier: Apache-2.0
#include "base/host_list.h"

#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil {
namespace {

using Hosts = std::vector<std::string>;

TEST(HostListTest, ExpandsZeroPaddedRangesAndSingles) {
  auto hosts = ExpandHostList("node[01-03,10]");
  ASSERT_TRUE(hosts.ok()) << hosts.status().ToString();
  EXPECT_EQ(*hosts, (Hosts{"node01", "node02", "node03", "node10"}));
  EXPECT_EQ(ExpandHostList("node[08-11]")->at(2), "node10");
  EXPECT_EQ(ExpandHostList("n[1-10]")->size(), 10u);
  EXPECT_EQ(ExpandHostList("n[1-10]")->back(), "n10");
  EXPECT_EQ(ExpandHostList("node[001-064,070]")->size(), 65u);
}

TEST(HostListTest, ExpandsSeveralBracketGroupsLeftToRight) {
  EXPECT_EQ(*ExpandHostList("r[1-2]-g[0-1]"), (Hosts{"r1-g0", "r1-g1", "r2-g0", "r2-g1"}));
}

TEST(HostListTest, ExpandsHostPortEntries) {
  auto hosts = ExpandHostList("127.0.0.1:[1801-1832]");
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 32u);
  EXPECT_EQ(hosts->front(), "127.0.0.1:1801");
  EXPECT_EQ(hosts->back(), "127.0.0.1:1832");
}

TEST(HostListTest, ExpandsCommaListsMixingForms) {
  EXPECT_EQ(*ExpandHostList("a, b[1-2],c:1779"), (Hosts{"a", "b1", "b2", "c:1779"}));
  EXPECT_EQ(*ExpandHostList("localhost"), (Hosts{"localhost"}));
}

TEST(HostListTest, RejectsMalformedLists) {
  for (const char* bad :
       {"", "a,,b", "n[1-", "n]1[", "n[[1]]", "n[3-1]", "n[a-b]", "n[]", "n[1-2-3]", "n[-1]"}) {
    EXPECT_FALSE(ExpandHostList(bad).ok()) << bad;
  }
}

TEST(HostListTest, CapsExpansion) {
  EXPECT_EQ(ExpandHostList("n[0-99999999]").status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ExpandHostList("a[0-999]b[0-999]", 1000).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(HostListTest, ReadsHostFiles) {
  char tmpl[] = "/tmp/vigil-hostfile-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_TRUE(WriteFileAtomic(tmpl, "# cluster\nnode[1-2] slots=8\n\n  gpu7  # spare\n").ok());
  auto hosts = ReadHostFile(tmpl);
  unlink(tmpl);
  ASSERT_TRUE(hosts.ok()) << hosts.status().ToString();
  EXPECT_EQ(*hosts, (Hosts{"node1", "node2", "gpu7"}));
  EXPECT_FALSE(ReadHostFile("/nonexistent/hostfile").ok());
}

}  // namespace
}  // namespace vigil
