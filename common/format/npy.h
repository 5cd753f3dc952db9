// File: common/format/npy.h
//
// The .npy files of tensor dumps (docs/format.md section 5): NumPy format
// 1.0, little-endian, one flat C-order array per buffer whose bytes are
// exactly the buffer's bytes. One list maps each trace dtype to its NumPy
// `descr`; the shim's dump writer and the analyzer's .npy reader both use
// it. bf16 has no NumPy dtype and is stored as `<u2` (its bit patterns),
// the f8 formats and `raw` as `|u1`: the sidecar JSON names the real dtype.
//
// Example:
//   std::string h = NpyHeader(DType::kF32, 640);  // "\x93NUMPY\x01\x00" ... "(640,), }   \n"
//   h.size() % 64 == 0;                            // true: the data starts aligned
//   NpyDescr(DType::kBF16);                        // "<u2"
#ifndef NUMTRACE_COMMON_FORMAT_NPY_H_
#define NUMTRACE_COMMON_FORMAT_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/format/dtype.h"

namespace numtrace {

// NumPy's `descr` for a buffer of `dtype`, e.g. "<f4", "|b1", "<u2" (bf16).
std::string_view NpyDescr(DType dtype);

// Element count of a dump of `bytes` bytes under `dtype` (bytes for raw):
// the length of the .npy's one dimension.
uint64_t NpyElementCount(DType dtype, uint64_t bytes);

// The complete header (magic, version 1.0, length, dict, padding, '\n') of a
// flat array of `count` elements. Its size is a multiple of 64.
std::string NpyHeader(DType dtype, uint64_t count);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_NPY_H_
