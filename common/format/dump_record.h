// File: common/format/dump_record.h
//
// The JSON sidecar of one dumped launch (docs/format.md section 5):
// `dump_<rank>_<seq>.json`, naming the launch and, per buffer, its arg,
// role, dtype, size, element count, the trace's hash and the .npy files
// holding its bytes before and after the launch. Written by the shim's
// tensor dumper, read by `numtrace-diff --tensors` (analyzer/tensors/).
//
// Example:
//   DumpRecord d{.seq = 41, .step = 2, .name = "k", .rank = 0};
//   d.buffers.push_back({.arg = 1, .role = Role::kOut, .dtype = DType::kF32, .bytes = 64,
//                        .n = 16, .hash = 0x9f3a..., .after = "dump_0_41.arg1.after.npy"});
//   std::string json;
//   AppendDumpJson(d, &json);  // {"format":"numtrace-dump","version":1,"seq":41,...}\n
#ifndef NUMTRACE_COMMON_FORMAT_DUMP_RECORD_H_
#define NUMTRACE_COMMON_FORMAT_DUMP_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/format/dtype.h"
#include "common/format/records.h"

namespace numtrace {

inline constexpr std::string_view kDumpFormatName = "numtrace-dump";
inline constexpr int kDumpFormatVersion = 1;

struct DumpBuffer {
  uint32_t arg = 0;
  Role role = Role::kUnknown;
  DType dtype = DType::kRaw;
  uint64_t bytes = 0;
  uint64_t n = 0;       // elements under dtype (bytes for raw), as the trace's stats
  uint64_t hash = 0;    // the trace's `hash` of the buffer after the launch
  std::string before;   // .npy file name beside the sidecar; empty: not measured before
  std::string after;
};

struct DumpRecord {
  uint64_t seq = 0;
  std::optional<int64_t> step;
  std::string name;
  int64_t rank = 0;
  std::vector<DumpBuffer> buffers;  // in the order of the trace record's buffers
};

// Appends the sidecar as one JSON object and a newline.
void AppendDumpJson(const DumpRecord& dump, std::string* out);

// File names: "dump_<rank>_<seq>.json" and, for the buffer at `arg` that is
// the `nth` (0-based) of its launch with that arg, of `count` such buffers,
// "dump_<rank>_<seq>.arg<A>.<when>.npy" (count == 1) or
// "dump_<rank>_<seq>.arg<A>_<nth>.<when>.npy" (a struct parameter holding
// several pointers), `when` = "before" or "after". With `pid` >= 0 the stem
// is "dump_<rank>_<seq>.pid<P>" ("dump_0_41.pid812.json",
// "dump_0_41.pid812.arg1.after.npy"): the names of a dump set whose plain
// names another process (or an earlier run) already holds - files are
// created exclusively, as traces are, never over an earlier dump.
std::string DumpSidecarName(int64_t rank, uint64_t seq, int64_t pid = -1);
std::string DumpNpyName(int64_t rank, uint64_t seq, uint32_t arg, uint32_t nth, uint32_t count,
                        std::string_view when, int64_t pid = -1);

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_DUMP_RECORD_H_
