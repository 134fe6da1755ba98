// SPDX-License-Identifier: Apache-2.0
// Status and StatusOr<T>: how every fallible function in Vigil reports failure. We never throw;
// exceptions from third-party libraries are caught at the boundary that calls them. Messages read
// "what: why" and carry the path or peer involved. Thread-compatible value types.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace vigil {

enum class StatusCode {
  kOk = 0,
  kCancelled,
  kInvalidArgument,
  kDeadlineExceeded,
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kResourceExhausted,
  kFailedPrecondition,
  kUnimplemented,
  kInternal,
  kUnavailable,
  kDataLoss,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NOT_FOUND: open /proc/x: No such file or directory", or "OK".
  std::string ToString() const;
  // Returns a copy whose message is "context: <message>".
  Status WithContext(std::string_view context) const;
  void IgnoreError() const {}

  bool operator==(const Status& other) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status PermissionDeniedError(std::string message);
Status UnavailableError(std::string message);
Status DataLossError(std::string message);
Status FailedPreconditionError(std::string message);
Status InternalError(std::string message);
Status DeadlineExceededError(std::string message);
Status ResourceExhaustedError(std::string message);
Status AlreadyExistsError(std::string message);
Status CancelledError(std::string message);
Status UnimplementedError(std::string message);

// Maps errno to a code (ENOENT/ENOTDIR -> NotFound, EACCES/EPERM -> PermissionDenied, ...) and
// builds "what: <strerror>" with the thread-safe strerrordesc_np.
Status ErrnoStatus(int err, std::string_view what);

// NotFound or PermissionDenied: the source does not exist on this host (node_exporter's ErrNoData).
inline bool IsAbsent(const Status& s) {
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kPermissionDenied;
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : value_(status) { assert(!status.ok()); }  // NOLINT
  StatusOr(Status&& status) : value_(std::move(status)) {                    // NOLINT
    assert(!std::get<Status>(value_).ok());
  }
  StatusOr(const T& value) : value_(value) {}        // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? OkStatus() : std::get<Status>(value_); }

  const T& value() const& { return std::get<T>(value_); }
  T& value() & { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<Status, T> value_;
};

}  // namespace vigil

#define VIGIL_STATUS_CONCAT_INNER(a, b) a##b
#define VIGIL_STATUS_CONCAT(a, b) VIGIL_STATUS_CONCAT_INNER(a, b)

// Returns from the calling function when `expr` (a Status) is not OK.
#define VIGIL_RETURN_IF_ERROR(expr)             \
  do {                                          \
    ::vigil::Status vigil_status_tmp_ = (expr); \
    if (!vigil_status_tmp_.ok()) {              \
      return vigil_status_tmp_;                 \
    }                                           \
  } while (false)

// `VIGIL_ASSIGN_OR_RETURN(auto x, MakeX());` declares x or returns MakeX()'s error.
#define VIGIL_ASSIGN_OR_RETURN(lhs, expr) \
  VIGIL_ASSIGN_OR_RETURN_IMPL(VIGIL_STATUS_CONCAT(vigil_statusor_, __LINE__), lhs, expr)
#define VIGIL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) {                                  \
    return tmp.status();                            \
  }                                                 \
  lhs = std::move(tmp).value()
