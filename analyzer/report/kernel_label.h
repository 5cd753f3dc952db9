// File: analyzer/report/kernel_label.h
//
// A short, readable label for a kernel in reports: the demangled name without
// return type, namespaces, template arguments and parameters. Reports show the
// label and keep the full demangled name one click (or hover) away, because a
// full ATen or CUTLASS name runs to hundreds of characters.
//
// Example:
//   KernelLabel("void at::native::vectorized_elementwise_kernel<4, at::native::"
//               "CUDAFunctor_add<c10::BFloat16>>(int, float*)")
//     // "vectorized_elementwise_kernel"
//   KernelLabel("triton_poi_fused_add_0")  // "triton_poi_fused_add_0"
#ifndef NUMTRACE_ANALYZER_REPORT_KERNEL_LABEL_H_
#define NUMTRACE_ANALYZER_REPORT_KERNEL_LABEL_H_

#include <string>
#include <string_view>

namespace numtrace::analyzer {

std::string KernelLabel(std::string_view demangled);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_KERNEL_LABEL_H_
