// File: test/analyzer/tensors/dump_files.h
//
// Writes tensor dumps for the analyzer's tests exactly as the shim lays
// them out (docs/format.md section 5): .npy files from common/format/npy.h
// and the sidecar from common/format/dump_record.h.
#ifndef NUMTRACE_TEST_ANALYZER_TENSORS_DUMP_FILES_H_
#define NUMTRACE_TEST_ANALYZER_TENSORS_DUMP_FILES_H_

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/format/dump_record.h"
#include "common/format/npy.h"
#include "common/numeric/buffer_hash.h"
#include "test/util/scratch_dir.h"

namespace numtrace::testing {

inline uint64_t HashOfBytes(const std::vector<uint8_t>& b) {
  uint64_t acc = 0;
  for (uint64_t w = 0; w < (b.size() + 7) / 8; ++w) acc += HashWord(LoadHashWord(b.data(), b.size(), w), w);
  return FinalizeHash(acc, b.size());
}

template <typename T>
std::vector<uint8_t> BytesOf(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline void WriteNpy(const std::filesystem::path& path, DType dtype, const std::vector<uint8_t>& bytes) {
  std::string s = NpyHeader(dtype, NpyElementCount(dtype, bytes.size()));
  s.append(bytes.begin(), bytes.end());
  WriteFileText(path, s);
}

// A dump of one launch with one output buffer (arg 1): `before` and `after`.
inline std::filesystem::path WriteDump(const std::filesystem::path& dir, uint64_t seq, DType dtype,
                                       const std::vector<uint8_t>& before, const std::vector<uint8_t>& after,
                                       const std::string& name = "gemm") {
  std::filesystem::create_directories(dir);
  DumpRecord d;
  d.seq = seq;
  d.step = 2;
  d.name = name;
  DumpBuffer b;
  b.arg = 1;
  b.role = Role::kOut;
  b.dtype = dtype;
  b.bytes = after.size();
  b.n = NpyElementCount(dtype, after.size());
  b.hash = HashOfBytes(after);
  b.before = DumpNpyName(0, seq, 1, 0, 1, "before");
  b.after = DumpNpyName(0, seq, 1, 0, 1, "after");
  WriteNpy(dir / b.before, dtype, before);
  WriteNpy(dir / b.after, dtype, after);
  d.buffers.push_back(b);
  std::string json;
  AppendDumpJson(d, &json);
  const std::filesystem::path sidecar = dir / DumpSidecarName(0, seq);
  WriteFileText(sidecar, json);
  return sidecar;
}

}  // namespace numtrace::testing

#endif  // NUMTRACE_TEST_ANALYZER_TENSORS_DUMP_FILES_H_
