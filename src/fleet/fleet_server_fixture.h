// SPDX-License-Identifier: Apache-2.0
// A gtest fixture for the vigil-fleet HTTP routes: a fresh ledger in a per-test directory and a
// FleetServer on a free loopback port, with an httplib client pointed at it. Route tests derive
// from it and set the options they test. Owner: fleet. Test-only.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <httplib.h>

#include "fleet/fleet_server.h"
#include "fleet/ledger_store.h"

namespace vigil::fleet_test {

class FleetServerFixture : public ::testing::Test {
 protected:
  // `tokens` non-empty: written as the token file (lines "HOST TOKEN").
  void StartServer(FleetServerOptions o, const std::string& tokens = "") {
    dir_ = std::filesystem::temp_directory_path() /
           ("vigil-fleetsrv-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    LedgerOptions lo;
    lo.path = (dir_ / "fleet.db").string();
    auto store = LedgerStore::Open(lo);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    o.port = 0;
    if (!tokens.empty()) {
      o.token_file = (dir_ / "tokens").string();
      std::ofstream(o.token_file) << tokens;
    }
    server_ = std::make_unique<FleetServer>(o, store_.get());
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    server_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<LedgerStore> store_;
  std::unique_ptr<FleetServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace vigil::fleet_test
