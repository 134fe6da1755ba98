// SPDX-License-Identifier: Apache-2.0
#include "profile/flamegraph_html.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace vigil {
namespace {

// The JSON between the profile-data script tags.
std::string EmbeddedJson(const std::string& html) {
  const std::string open = R"(<script id="profile-data" type="application/json">)";
  const size_t start = html.find(open);
  const size_t end = html.find("</script>", start);
  if (start == std::string::npos || end == std::string::npos) {
    return "";
  }
  return html.substr(start + open.size(), end - start - open.size());
}

TEST(FlameGraphHtmlTest, SelfContainedWithTheTreeEmbeddedAndScriptSafe) {
  Profile profile;
  ProfileFrame evil;
  evil.function = "f</script><b>";
  ProfileFrame main_frame;
  main_frame.function = "main";
  profile.Add({profile.Intern(main_frame), profile.Intern(evil)}, 4);

  const std::string html = WriteFlameGraphHtml(profile, "pid <1>");

  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_NE(html.find("<title>pid &lt;1&gt;</title>"), std::string::npos);
  nlohmann::json tree = nlohmann::json::parse(EmbeddedJson(html), nullptr, false);
  ASSERT_FALSE(tree.is_discarded());
  EXPECT_EQ(tree["total"], 4);
  const nlohmann::json& leaf = tree["root"]["c"][0]["c"][0];
  EXPECT_EQ(tree["names"][leaf["n"].get<int>()], "f</script><b>");
  EXPECT_EQ(leaf["v"], 4);
}

}  // namespace
}  // namespace vigil
