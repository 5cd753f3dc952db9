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

#include <ostream>
#include <string>

namespace numtrace::launcher {

// Returns the number of traces listed.
int ListRankTraces(const std::string& dir, std::ostream& out);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_RANK_LISTING_H_
