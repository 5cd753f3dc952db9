// File: common/names/demangle.h
//
// Itanium C++ demangling of kernel symbols (`_ZN2at6native...`). Names that
// are not mangled (Triton's `triton_poi_fused_add_0`, already demangled names
// from a profiler) come back unchanged.
//
// Example:
//   Demangle("_Z3fooPf")  // "foo(float*)"
//   Demangle("triton_poi_fused_add_0")  // "triton_poi_fused_add_0"
#ifndef NUMTRACE_COMMON_NAMES_DEMANGLE_H_
#define NUMTRACE_COMMON_NAMES_DEMANGLE_H_

#include <string>
#include <string_view>

namespace numtrace {

std::string Demangle(std::string_view symbol);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_NAMES_DEMANGLE_H_
