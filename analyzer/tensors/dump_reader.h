// File: analyzer/tensors/dump_reader.h
//
// Reads one side of `numtrace-diff --tensors`: a tensor dump's JSON sidecar
// (docs/format.md section 5) and the .npy files it names, or a bare .npy
// file. A directory argument must hold exactly one sidecar (a dump of one
// launch); name the sidecar itself when a directory holds several.
//
// Example:
//   absl::StatusOr<DumpSide> a = ReadDumpSide("dumpA", /*dtype=*/std::nullopt);
//   a->arrays[0].dtype;  // f32, from the sidecar
//   a->arrays[0].when;   // "after"
#ifndef NUMTRACE_ANALYZER_TENSORS_DUMP_READER_H_
#define NUMTRACE_ANALYZER_TENSORS_DUMP_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/format/dtype.h"
#include "common/format/records.h"

namespace numtrace::analyzer {

// One buffer's bytes at one moment (before or after the launch).
struct DumpArray {
  uint32_t arg = 0;
  uint32_t nth = 0;        // which of the launch's buffers with this arg (struct parameters)
  Role role = Role::kUnknown;
  std::string when;        // "before" or "after"
  DType dtype = DType::kRaw;
  uint64_t hash = 0;       // the trace's hash (after) from the sidecar; 0 for a bare .npy
  std::string file;        // the .npy path
  std::vector<uint8_t> data;
};

struct DumpSide {
  std::string path;        // the sidecar or .npy as resolved
  std::optional<uint64_t> seq;
  std::string name;        // kernel name ("" for a bare .npy)
  std::vector<DumpArray> arrays;
  std::vector<std::string> warnings;  // e.g. bytes that do not hash to the trace's hash
};

// `path`: a directory with one dump_*.json, a sidecar, or a .npy file.
// `dtype` overrides the dtype of a bare .npy (its descr decides otherwise).
[[nodiscard]] absl::StatusOr<DumpSide> ReadDumpSide(const std::string& path, std::optional<DType> dtype);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_TENSORS_DUMP_READER_H_
