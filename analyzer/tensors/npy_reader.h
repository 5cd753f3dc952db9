// File: analyzer/tensors/npy_reader.h
//
// Reads a .npy file (NumPy format 1.0, 2.0 or 3.0) as a flat array of raw
// little-endian bytes: what the tensor dumps hold (docs/format.md section 5)
// and what `numpy.save` writes for a C-order array. Multi-dimensional arrays
// are read flat; Fortran order and big-endian data are refused with a reason,
// since their bytes are not the buffer's bytes.
//
// Example:
//   absl::StatusOr<NpyArray> a = ReadNpy("dump_0_41.arg1.after.npy");
//   a->descr;   // "<f4"
//   a->count;   // 640 (product of the shape)
//   a->data;    // 2560 bytes
#ifndef NUMTRACE_ANALYZER_TENSORS_NPY_READER_H_
#define NUMTRACE_ANALYZER_TENSORS_NPY_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/format/dtype.h"

namespace numtrace::analyzer {

struct NpyArray {
  std::string descr;           // as written, e.g. "<f4", "|u1"
  uint64_t count = 0;          // elements (product of the shape)
  std::vector<uint8_t> data;   // count * item size bytes
};

// The largest .npy read: four times the shim's default dump budget
// (NUMTRACE_DUMP_MAX_BYTES, 4 GiB); the array is held in memory twice
// while it is decoded.
inline constexpr uint64_t kMaxNpyBytes = uint64_t{16} << 30;

// Errors name the file and what is wrong with it. Read through
// ReadBoundedFile (common/io/bounded_file.h): a fifo, a device or a link
// to one is refused at once, a file over kMaxNpyBytes before it is read, and
// running out of memory is ResourceExhausted naming the file.
[[nodiscard]] absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
// Parses a whole file's contents; `path` only names it in errors.
[[nodiscard]] absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes, const std::string& path);

// The trace dtype a descr stands for when nothing else says: "<u2" -> bf16
// (the only 2-byte unsigned dump), "|u1" -> u8; nullopt when none fits.
std::optional<DType> DTypeForDescr(std::string_view descr);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_TENSORS_NPY_READER_H_
