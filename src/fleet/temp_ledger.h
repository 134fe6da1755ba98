// SPDX-License-Identifier: Apache-2.0
// A ledger in a fresh temporary directory, removed with it: the fleet tests' common ground.
// Owner: fleet. Test-only.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "fleet/ledger_store.h"

namespace vigil::fleet_test {

class TempLedger {
 public:
  TempLedger() {
    char tmpl[] = "/tmp/vigil-ledger-XXXXXX";
    dir_ = mkdtemp(tmpl);
    LedgerOptions o;
    o.path = db_path();
    auto s = LedgerStore::Open(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) store_ = std::move(*s);
  }
  ~TempLedger() {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  TempLedger(const TempLedger&) = delete;
  TempLedger& operator=(const TempLedger&) = delete;

  LedgerStore* store() { return store_.get(); }
  const std::string& dir() const { return dir_; }
  std::string db_path() const { return dir_ + "/fleet.db"; }

 private:
  std::string dir_;
  std::unique_ptr<LedgerStore> store_;
};

}  // namespace vigil::fleet_test
