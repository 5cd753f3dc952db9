// File: test/shim/reduce/reduce_nvcc_host.h
//
// ReduceViaNvccHost: the tile algorithm compiled by nvcc (host side), see
// reduce_nvcc_host.cu. Must equal ReduceHost bit for bit.
//
// Example:
//   BufferStats s = ReduceViaNvccHost(buf.data(), buf.size(), DType::kF16);
#ifndef NUMTRACE_TEST_SHIM_REDUCE_REDUCE_NVCC_HOST_H_
#define NUMTRACE_TEST_SHIM_REDUCE_REDUCE_NVCC_HOST_H_

#include <cstdint>

#include "common/format/dtype.h"
#include "common/format/stats.h"

namespace numtrace::shim::testing {

BufferStats ReduceViaNvccHost(const void* data, uint64_t bytes, DType dtype);

}  // namespace numtrace::shim::testing

#endif  // NUMTRACE_TEST_SHIM_REDUCE_REDUCE_NVCC_HOST_H_
