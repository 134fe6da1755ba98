// SPDX-License-Identifier: Apache-2.0
#include "fleet/sqlite_db.h"

#include <string>
#include <utility>

#include <sqlite3.h>

namespace vigil {
namespace {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  const std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  if (rc == SQLITE_FULL || rc == SQLITE_NOMEM) {
    return ResourceExhaustedError(msg);
  }
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_CANTOPEN) {
    return UnavailableError(msg);
  }
  if (rc == SQLITE_CONSTRAINT) {
    return AlreadyExistsError(msg);
  }
  return InternalError(msg);
}

}  // namespace

Stmt::~Stmt() {
  if (stmt_ != nullptr) {
    sqlite3_finalize(stmt_);
  }
}

Stmt::Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }

Stmt& Stmt::operator=(Stmt&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) {
      sqlite3_finalize(stmt_);
    }
    db_ = other.db_;
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Stmt& Stmt::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Stmt& Stmt::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Stmt& Stmt::Bind(int index, std::string_view value) {
  // An empty view may have a null data(): that would bind SQL NULL, not ''.
  sqlite3_bind_text(stmt_, index, value.data() ? value.data() : "", static_cast<int>(value.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

StatusOr<bool> Stmt::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  Status status = SqliteError(db_, rc, "sqlite step");
  sqlite3_reset(stmt_);
  return status;
}

Status Stmt::Run() {
  while (true) {
    StatusOr<bool> row = Step();
    if (!row.ok()) {
      return row.status();
    }
    if (!*row) {
      break;
    }
  }
  Reset();
  return OkStatus();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Stmt::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double Stmt::Real(int column) const { return sqlite3_column_double(stmt_, column); }
bool Stmt::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::string Stmt::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
              : std::string();
}

StatusOr<std::unique_ptr<Db>> Db::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(raw, rc, "open " + path);
    sqlite3_close(raw);
    return status;
  }
  sqlite3_busy_timeout(raw, 5000);
  return std::unique_ptr<Db>(new Db(raw, path));
}

Db::~Db() { sqlite3_close(db_); }

Status Db::Exec(std::string_view sql) {
  char* err = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    Status status = SqliteError(nullptr, rc, "sqlite exec");
    return Status(status.code(), "sqlite exec: " + msg);
  }
  return OkStatus();
}

StatusOr<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return SqliteError(db_, rc, "sqlite prepare");
  }
  return Stmt(db_, stmt);
}

int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
bool Db::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

}  // namespace vigil
