// SPDX-License-Identifier: Apache-2.0
#include "fleet/web/web_assets.h"

#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>

#include <gtest/gtest.h>
#include <httplib.h>

#include "fleet/fleet_server.h"
#include "fleet/ledger_store.h"

namespace vigil {
namespace {

// The files index.html loads (vite writes them as /assets/<name>-<hash>.<ext>).
std::vector<std::string> ReferencedAssets(std::string_view html) {
  std::vector<std::string> out;
  const std::string text(html);
  const std::regex ref(R"re((?:src|href)="(/assets/[^"]+)")re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ref); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

TEST(WebAssetsTest, RootIsIndexHtmlWithTheAppMountPoint) {
  const WebAsset* root = FindWebAsset("/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root, FindWebAsset("/index.html"));
  EXPECT_EQ(root->content_type, "text/html; charset=utf-8");
  EXPECT_NE(root->body.find("id=\"app\""), std::string_view::npos);
}

TEST(WebAssetsTest, EveryAssetIndexHtmlLoadsIsEmbeddedWithItsType) {
  const std::vector<std::string> refs = ReferencedAssets(FindWebAsset("/")->body);
  bool js = false, css = false;
  for (const std::string& path : refs) {
    const WebAsset* a = FindWebAsset(path);
    ASSERT_NE(a, nullptr) << path;
    EXPECT_GT(a->body.size(), 100u) << path;
    js |= a->content_type.starts_with("text/javascript");
    css |= a->content_type.starts_with("text/css");
  }
  EXPECT_TRUE(js) << "no script referenced by index.html";
  EXPECT_TRUE(css) << "no stylesheet referenced by index.html";
}

TEST(WebAssetsTest, UnknownPathIsNotFound) {
  EXPECT_EQ(FindWebAsset("/assets/missing.js"), nullptr);
  EXPECT_EQ(FindWebAsset("/api/v1/jobs"), nullptr);
}

TEST(WebAssetsTest, FleetServerServesTheDashboard) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vigil-webassets-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  LedgerOptions lo;
  lo.path = (dir / "fleet.db").string();
  auto store = LedgerStore::Open(lo);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  FleetServerOptions o;
  o.port = 0;
  {
    FleetServer server(o, store->get());
    ASSERT_TRUE(server.Start().ok());
    httplib::Client client("127.0.0.1", server.port());
    auto index = client.Get("/");
    ASSERT_TRUE(index);
    EXPECT_EQ(index->status, 200);
    EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
    EXPECT_EQ(index->body, FindWebAsset("/")->body);
    for (const std::string& path : ReferencedAssets(index->body)) {
      auto asset = client.Get(path);
      ASSERT_TRUE(asset) << path;
      EXPECT_EQ(asset->status, 200) << path;
      EXPECT_EQ(asset->body, FindWebAsset(path)->body) << path;
      EXPECT_NE(asset->get_header_value("Cache-Control").find("immutable"), std::string::npos);
    }
    auto missing = client.Get("/assets/missing.js");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->status, 404);
    // The API still answers beside the dashboard.
    auto hosts = client.Get("/api/v1/hosts");
    ASSERT_TRUE(hosts);
    EXPECT_EQ(hosts->status, 200);
  }
  store->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil
