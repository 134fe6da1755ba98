// SPDX-License-Identifier: Apache-2.0
// A thin RAII layer over the SQLite C API for the fleet ledger: one connection (Db) and prepared
// statements (Stmt) with typed binds and column reads. Every failure is a Status carrying
// sqlite3_errmsg. Owner: fleet. Thread-compatible: a Db and its statements belong to one thread at
// a time (the ledger store serialises access with its own mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace vigil {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Stmt();
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Binds are 1-based, like SQLite's.
  Stmt& Bind(int index, int64_t value);
  Stmt& Bind(int index, double value);
  Stmt& Bind(int index, std::string_view value);
  // Steps once: true when a row is available, false when done.
  StatusOr<bool> Step();
  // Steps to completion (for statements that return no rows), then resets for reuse.
  Status Run();
  void Reset();

  int64_t Int(int column) const;
  double Real(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class Db {
 public:
  // Opens (creating) the file; ":memory:" for a private in-memory database.
  static StatusOr<std::unique_ptr<Db>> Open(const std::string& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more statements that return no rows.
  Status Exec(std::string_view sql);
  StatusOr<Stmt> Prepare(std::string_view sql);
  int64_t LastInsertRowId() const;
  // False in autocommit mode: no BEGIN is open, or SQLite rolled the transaction back itself
  // (it may on SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY or SQLITE_NOMEM).
  bool InTransaction() const;
  const std::string& path() const { return path_; }

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace vigil
