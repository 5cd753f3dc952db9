// File: launcher/rank_listing.h
//
// What `numtrace run` prints after the job: one line per trace in the output
// directory - rank, kernels captured, complete or truncated (and dropped
// records), where the file is - or one line saying nothing was captured and
// where to look (docs/troubleshooting.md).
//
// Example output:
//   rank 0: 412 kernels captured, complete: runA/rank_0.ntrace.jsonl
//   rank 1: 97 kernels captured, TRUNCATED (no footer: the process was cut short): runA/rank_1.ntrace.jsonl
#ifndef NUMTRACE_LAUNCHER_RANK_LISTING_H_
#define NUMTRACE_LAUNCHER_RANK_LISTING_H_

#include <optional>
#include <ostream>
#include <set>
#include <string>

namespace numtrace::launcher {

// The trace files in `dir` now (their paths), for telling this run's from
// an earlier run's (`run --force` into a used directory).
std::set<std::string> TraceFilesIn(const std::string& dir);

// Lists the traces in `dir` except those in `earlier` (there before the
// job: named in one line with what it means for diff). Returns the number
// of traces listed. `ops_level`: the job ran with NUMTRACE_LEVEL=ops (the
// line for no trace then says what operator level captures).
// `cuda_processes`: how many processes of the job started CUDA with the
// shim loaded (NUMTRACE_RUN_STATE), when known: with none, the line for no
// trace says so instead of listing the possible causes.
int ListRankTraces(const std::string& dir, std::ostream& out, const std::set<std::string>& earlier = {},
                   bool ops_level = false, std::optional<int> cuda_processes = std::nullopt);

// Whether the file system holding `dir` has no space left now: a trace cut
// short there was most likely cut by that, and another run would be too.
bool FileSystemFull(const std::string& dir);
// The line that stops a hunt after a run whose output `dir` is on a full
// file system (unescaped: FailLine escapes); empty when it is not full.
std::string FullFileSystemLine(const std::string& dir);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_RANK_LISTING_H_
