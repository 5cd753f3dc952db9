// File: analyzer/read/trace_file_name.h
//
// The rank and stem of a trace's file name `rank_<R>...`: the rank in the
// name is the fallback when a trace does not carry one, and how two run
// directories are paired. Which names each format writes is its importer's
// row (read/importer.h, ParseTraceFileName).
//
// Example:
//   RankFromFileName("runA/rank_3.pid42.ntrace.jsonl")  -> 3
//   FileStem("runA/rank_3.ntrace.jsonl")  -> "rank_3"
//   RankFromFileName("other.jsonl")       -> std::nullopt
#ifndef NUMTRACE_ANALYZER_READ_TRACE_FILE_NAME_H_
#define NUMTRACE_ANALYZER_READ_TRACE_FILE_NAME_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace numtrace::analyzer {

// R from a last path component starting `rank_<R>` followed by a non-digit
// or the end; nullopt otherwise. `rest`, when given, receives what follows
// the digits ("_activations.log", ".pid42.ntrace.jsonl").
std::optional<int64_t> RankFromFileName(std::string_view path, std::string_view* rest = nullptr);

// The last path component.
std::string_view BaseName(std::string_view path);

// The last path component without the known trace suffixes
// (.ntrace.jsonl, .jsonl, .log, .json.gz, .json); the default label of a trace.
std::string_view FileStem(std::string_view path);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_TRACE_FILE_NAME_H_
