// File: shim/engine/annotations.h
//
// Per-kernel dtype annotations given by the user through
// numtrace_annotate_kernel(name, "bf16,bf16,f32,i64"): one dtype per kernel
// parameter, overriding what the kernel name suggests (dtype_from
// "signature"). An entry of "-" or an empty entry leaves that parameter to
// inference. A name matches the mangled symbol, the demangled name, or the
// demangled name's function part (without return type, template and
// parameter lists).
//
// Example:
//   AnnotationTable t;
//   t.Add("my_kernel", "bf16,-,f32");   // true
//   t.Lookup("_Z9my_kernelPvS_Pf", "my_kernel(void*, void*, float*)");
//     // {kBF16, nullopt, kF32}
#ifndef NUMTRACE_SHIM_ENGINE_ANNOTATIONS_H_
#define NUMTRACE_SHIM_ENGINE_ANNOTATIONS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/format/dtype.h"

namespace numtrace::shim {

using ArgDTypes = std::vector<std::optional<DType>>;

class AnnotationTable {
 public:
  // False (table unchanged) when `dtypes` holds an unknown dtype name or
  // `name` is empty; `*error` then says which entry.
  bool Add(std::string_view name, std::string_view dtypes, std::string* error = nullptr);
  std::optional<ArgDTypes> Lookup(std::string_view symbol, std::string_view demangled) const;
  // Bumped on every Add, so caches know to look again.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // "void at::foo<float>(int)" -> "at::foo". Exposed for tests.
  static std::string_view FunctionPart(std::string_view demangled);

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, ArgDTypes> by_name_;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_ANNOTATIONS_H_
