// File: shim/engine/dtype_name_parts.h
//
// Internal to dtype inference (dtype_inference.cc); do not include
// elsewhere. Reads a demangled kernel name as text: no full C++ parser, just
// bracket matching that survives both profiler spellings (kineto `(anonymous
// namespace)`, `{lambda(int)#1}`; Nsight `<unnamed>`, `(int)4`,
// `[lambda(int) (instance 1)]`) and SFINAE return types.
//
// Example:
//   NameParts p = SplitName("void at::native::k<float, 4>(float*, int)");
//   // p.qualified "at::native::k", p.targ_list {"float", "4"}, p.params "float*, int"
//   NormalizeType("c10::BFloat16 const*", &stars)  // "c10::BFloat16", stars 1
#ifndef NUMTRACE_SHIM_ENGINE_DTYPE_NAME_PARTS_H_
#define NUMTRACE_SHIM_ENGINE_DTYPE_NAME_PARTS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace numtrace::shim::dtype_internal {

void ReplaceAll(std::string* s, std::string_view from, std::string_view to);

// Index of the bracket closing the one opened at s[open]; npos if none.
size_t MatchClose(std::string_view s, size_t open);
// Splits at depth-0 commas; parts are trimmed.
std::vector<std::string_view> SplitTopLevel(std::string_view s);

// The pieces of `[return type] qualified::name[<targs>][(params)][ const]`.
struct NameParts {
  std::string_view qualified;
  std::string_view targs;
  std::vector<std::string_view> targ_list;
  std::string_view params;
  bool has_params = false;
  std::string_view head;  // everything before the parameter list
};

NameParts SplitName(std::string_view s);

// Drops const/volatile/struct/*/& and outer spaces; counts pointer stars.
std::string NormalizeType(std::string_view t, int* stars = nullptr);

// The type spellings of a template-argument region, in order (see .cc).
void CollectTypes(std::string_view r, std::vector<std::string>* out);

}  // namespace numtrace::shim::dtype_internal

#endif  // NUMTRACE_SHIM_ENGINE_DTYPE_NAME_PARTS_H_
