// File: analyzer/read/trace_file_name.h
//
// What a trace's file name says about it. The shim names its files
// `rank_<R>.ntrace.jsonl` (or `rank_<R>.pid<P>.ntrace.jsonl` when two
// processes of a run share a rank) and torchtitan writes
// `rank_<R>_activations.log`; the rank in the name is the fallback when a
// trace does not carry one, and how two run directories are paired.
//
// Example:
//   ParseTraceFileName("runA/rank_3.pid42.ntrace.jsonl")
//       -> {rank = 3, kind = kNumtrace}
//   FileStem("runA/rank_3.ntrace.jsonl")  -> "rank_3"
//   RankFromFileName("other.jsonl")       -> std::nullopt
#ifndef NUMTRACE_ANALYZER_READ_TRACE_FILE_NAME_H_
#define NUMTRACE_ANALYZER_READ_TRACE_FILE_NAME_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace numtrace::analyzer {

enum class TraceFileKind : uint8_t { kNumtrace, kDebugMode };

struct TraceFileName {
  int64_t rank = 0;
  TraceFileKind kind = TraceFileKind::kNumtrace;
};

// Recognises exactly the names the shim and torchtitan write (the last path
// component is looked at): `rank_<R>.ntrace.jsonl`,
// `rank_<R>.pid<P>.ntrace.jsonl`, `rank_<R>_activations.log`. Anything else
// (including the shim's `*.ntrace.jsonl.tmp`) -> nullopt.
std::optional<TraceFileName> ParseTraceFileName(std::string_view path);

// R from a last path component starting `rank_<R>` followed by a non-digit
// or the end; nullopt otherwise.
std::optional<int64_t> RankFromFileName(std::string_view path);

// The last path component without the known trace suffixes
// (.ntrace.jsonl, .jsonl, .log); the default label of a trace.
std::string_view FileStem(std::string_view path);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_TRACE_FILE_NAME_H_
