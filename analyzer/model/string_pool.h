// File: analyzer/model/string_pool.h
//
// Interns strings (kernel names repeat thousands of times in a trace) and
// hands out dense ids, so per-kernel data holds 4 bytes instead of a string
// and per-name work (demangling, normalising) is done once per distinct name.
//
// Example:
//   StringPool pool;
//   StringId a = pool.Intern("gemm");   // 0
//   pool.Intern("gemm") == a;           // true
//   pool.View(a);                       // "gemm"
#ifndef NUMTRACE_ANALYZER_MODEL_STRING_POOL_H_
#define NUMTRACE_ANALYZER_MODEL_STRING_POOL_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace numtrace::analyzer {

using StringId = uint32_t;

class StringPool {
 public:
  StringPool() = default;
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  StringId Intern(std::string_view s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    // std::deque never moves its elements, so the views in index_ stay valid.
    const std::string& stored = storage_.emplace_back(s);
    auto id = static_cast<StringId>(storage_.size() - 1);
    index_.emplace(std::string_view(stored), id);
    return id;
  }
  std::string_view View(StringId id) const { return storage_[id]; }
  // The id of a string already interned, else nullopt (nothing is added).
  std::optional<StringId> Find(std::string_view s) const {
    auto it = index_.find(s);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  size_t size() const { return storage_.size(); }

 private:
  std::deque<std::string> storage_;
  absl::flat_hash_map<std::string_view, StringId> index_;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_MODEL_STRING_POOL_H_
