// File: analyzer/read/importer.h
//
// The readers of every trace format numtrace-diff takes, behind one table
// (as Perfetto's trace processor guesses a trace's type and hands it to its
// importer). A row says what the format is called, which file names it is
// written under (how run directories pair by rank), how to recognise its
// first bytes, how to read it into the model (analyzer/model/trace.h), and
// which bad records its reader counts instead of failing on. Everything
// after read/ sees only the model: what a trace holds, never which row
// read it.
//
// Adding a format is one row in importer.cc and one reader file: the entry
// points below (a path, bytes in memory, an open LineReader) are written
// once for all rows.
//
// Example:
//   absl::StatusOr<Trace> t = ReadTrace("runA/rank_0.ntrace.jsonl");     // any format
//   const Importer* dm = FindImporter("debugmode-log");
//   absl::StatusOr<Trace> u = ReadTraceBytes(text, "x.log", dm);         // that format only
//   std::optional<TraceFileName> f = ParseTraceFileName("rank_3_activations.log");
//   // f->rank == 3, f->importer->name == "debugmode-log"
#ifndef NUMTRACE_ANALYZER_READ_IMPORTER_H_
#define NUMTRACE_ANALYZER_READ_IMPORTER_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/line_reader.h"

namespace numtrace::analyzer {

// One kind of bad record a reader skips and counts (Trace::skipped) rather
// than failing the whole file on.
struct SkipCounter {
  std::string_view name;         // "unknown_record_type"
  std::string_view description;  // one sentence for reports
  bool data_loss = true;         // values were lost (a warning); false: nothing to compare was in them
};

struct Importer {
  std::string_view name;  // "numtrace", "debugmode-log", ...: stable, for options and tests
  std::string_view kind;  // what the file is, in words: Trace::kind
  // The rank of a file named as this format writes its per-rank files
  // (only the last path component is looked at), else nullopt.
  std::optional<int64_t> (*rank_of_file_name)(std::string_view file_name);
  // Whether the first bytes of a file (up to 4 KiB, BOM and leading blanks
  // removed, never empty) are this format's. Rows are asked in table order:
  // the first that says yes reads the file.
  bool (*sniff)(std::string_view head);
  // Reads the whole input. Errors name the path (and line); the caller
  // catches std::bad_alloc.
  absl::StatusOr<Trace> (*read)(LineReader& reader);
  // The bad records this reader counts (empty: every bad record is fatal).
  std::span<const SkipCounter> skip_counters;
};

// The table, in sniffing order.
std::span<const Importer> Importers();
const Importer* FindImporter(std::string_view name);
// The row whose sniff accepts `head` (BOM and leading blanks are removed
// here), or nullptr.
const Importer* ImporterForContent(std::string_view head);

// What a trace's file name says about it: its rank and which row writes
// files of that name. The shim writes `rank_<R>.ntrace.jsonl` (or
// `rank_<R>.pid<P>.ntrace.jsonl`), torchtitan `rank_<R>_activations.log`.
struct TraceFileName {
  int64_t rank = 0;
  const Importer* importer = nullptr;
};
std::optional<TraceFileName> ParseTraceFileName(std::string_view path);

// Reads a trace of whichever format its contents are, or (with `importer`)
// of that format only. Errors: NotFound / PermissionDenied naming the path,
// "PATH: empty trace", "PATH: not a trace numtrace-diff reads (DebugMode
// JSON log, numtrace trace, DebugMode log)" (the table's kinds), the
// reader's own "PATH:LINE: reason", ResourceExhausted when memory runs out.
[[nodiscard]] absl::StatusOr<Trace> ReadTrace(const std::string& path, const Importer* importer = nullptr);
// Same, from bytes in memory (tests, fuzzers); `path_for_messages` prefixes
// errors and gives the default label and rank.
[[nodiscard]] absl::StatusOr<Trace> ReadTraceBytes(std::string_view contents, std::string_view path_for_messages,
                                                   const Importer* importer = nullptr);
// Same, from an open reader.
[[nodiscard]] absl::StatusOr<Trace> ReadTraceFrom(LineReader& reader, const Importer* importer = nullptr);

// Counts one skipped record of `counter` (one of the trace's importer's
// SkipCounters) found at `line`.
void CountSkipped(Trace* trace, const SkipCounter& counter, uint64_t line);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_IMPORTER_H_
