// File: shim/writer/trace_file.h
//
// Where a trace goes: the rank from the launcher's environment, and a file
// created with O_EXCL so two processes of one rank (a launcher and its child,
// a forked worker) never overwrite or interleave each other's lines: the
// first takes rank_<R>.ntrace.jsonl, a later one rank_<R>.pid<P>.ntrace.jsonl.
//
// Example:
//   int64_t rank = RankFromEnv(getenv_fn);      // RANK, LOCAL_RANK, ... or 0
//   std::string path, error;
//   int fd = CreateTraceFile("/tmp/run", rank, getpid(), &path, &error);
//   // path == "/tmp/run/rank_0.ntrace.jsonl" the first time
#ifndef NUMTRACE_SHIM_WRITER_TRACE_FILE_H_
#define NUMTRACE_SHIM_WRITER_TRACE_FILE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace numtrace::shim {

// RANK, else LOCAL_RANK, else SLURM_PROCID, else OMPI_COMM_WORLD_RANK, else 0.
// A variable that is set but not a non-negative integer is skipped.
int64_t RankFromEnv(const std::function<const char*(const char*)>& getenv);

// Creates the output directory (and its parents) if needed, then the trace
// file with O_EXCL. Returns the fd (O_WRONLY|O_APPEND|O_CLOEXEC), or -1 with
// `*error` set to one line naming the path and the reason.
int CreateTraceFile(const std::string& dir, int64_t rank, int64_t pid, std::string* path,
                    std::string* error);

// The current time as RFC 3339 UTC ("2026-11-29T11:00:00Z").
std::string UtcNowRfc3339();

// Writes all of `data`, retrying short writes and EINTR. False on error.
bool WriteAll(int fd, std::string_view data);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_WRITER_TRACE_FILE_H_
