// File: launcher/show_command.h
//
// `numtrace show TRACE [--kernel RE] [--seq N..M] [--json]`: a trace in a
// form people read - the header, then per kernel its seq, step, name, grid,
// and per buffer the argument, dtype (and where it came from), role, size
// and statistics. --json prints the selected kernel records exactly as the
// file holds them (one JSON line each), for jq and scripts.
//
// Example:
//   numtrace show runA/rank_0.ntrace.jsonl --kernel sgemm --seq 10..20
#ifndef NUMTRACE_LAUNCHER_SHOW_COMMAND_H_
#define NUMTRACE_LAUNCHER_SHOW_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launcher/command_context.h"

namespace numtrace::launcher {

struct SeqRange {
  uint64_t first = 0;
  uint64_t last = UINT64_MAX;  // inclusive
};

// "N", "N..M", "N..", "..M"; nullopt when malformed or first > last.
std::optional<SeqRange> ParseSeqRange(const std::string& text);

// args[0] == "show".
int ShowCommandMain(const std::vector<std::string>& args, const CommandContext& ctx);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_SHOW_COMMAND_H_
