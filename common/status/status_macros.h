// File: common/status/status_macros.h
//
// Early return of an error, for every layer that passes absl::Status and
// absl::StatusOr (the analyzer, the numtrace command, common's readers).
// Abseil's own RETURN_IF_ERROR and ASSIGN_OR_RETURN are Google-internal, not
// part of the published library (Debian's libabsl-dev has no such header), so
// these are ours, in Abseil's style and under our own prefix.
//
//   NT_RETURN_IF_ERROR(expr);  // expr is an absl::Status: returned if not OK
//   NT_ASSIGN_OR_RETURN(lhs, expr);
//     // expr is an absl::StatusOr<T>: its status returned if not OK, else its
//     // value moved into lhs, a declaration ("std::string text") or a variable
//
// Use them where the branch only returns the error as it is; a branch that
// adds to the message, prints a line or cleans up stays written out.
//
// NT_ASSIGN_OR_RETURN expands to three statements in the enclosing block
// (lhs stays in scope after it), so it is not the body of an unbraced if or
// loop, and at most one stands on a line (its temporary is named after
// __LINE__). lhs must not hold a bare comma: a type such as
// std::map<K, V> is written `auto`. Nor is lhs a structured binding
// ("auto [a, b]"): besides the comma, clang before 16 (the fuzz build's
// compiler, scripts/fuzz.sh) rejects a lambda that captures one, which GCC
// accepts, so such code breaks only there. Neither macro uses a lambda or a
// GNU statement expression: both expand the same under GCC and clang.
//
// Example:
//   absl::StatusOr<Overrides> ReadOverrideFile(const std::string& path) {
//     NT_ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, "the override file", kMax));
//     NT_RETURN_IF_ERROR(CheckOverrides(text));
//     return ParseOverrides(text, path);
//   }
#ifndef NUMTRACE_COMMON_STATUS_STATUS_MACROS_H_
#define NUMTRACE_COMMON_STATUS_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define NT_RETURN_IF_ERROR(expr)                                \
  do {                                                          \
    if (::absl::Status nt_status_ = (expr); !nt_status_.ok()) { \
      return nt_status_;                                        \
    }                                                           \
  } while (0)

#define NT_ASSIGN_OR_RETURN(lhs, expr) \
  NT_ASSIGN_OR_RETURN_IMPL_(NT_STATUS_MACROS_CONCAT_(nt_status_or_, __LINE__), lhs, expr)

// Implementation details of NT_ASSIGN_OR_RETURN.
#define NT_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define NT_STATUS_MACROS_CONCAT_(a, b) NT_STATUS_MACROS_CONCAT_INNER_(a, b)
#define NT_ASSIGN_OR_RETURN_IMPL_(status_or, lhs, expr)      \
  auto status_or = (expr);                                   \
  if (!status_or.ok()) return std::move(status_or).status(); \
  lhs = *std::move(status_or)

#endif  // NUMTRACE_COMMON_STATUS_STATUS_MACROS_H_
