// File: launcher/dump_from_summary.h
//
// `numtrace run --dump-first-divergence SUMMARY.json --side a|b`: turns a
// saved `numtrace diff --json` summary into the dump settings of the launch
// where the runs part - `--dump seq:N` with N that side's seq, and
// `--dump-expect NAME@` (that side's kernel name; the dumper notes a re-run
// that launched something else there). docs/configuration.md, "Tensor dumps".
//
// Example:
//   RunOptions o; o.dump_first_divergence = "summary.json"; o.side = "b";
//   absl::Status s = ResolveDumpFromSummary(&o);   // o.Get("NUMTRACE_DUMP") == "seq:3991"
#ifndef NUMTRACE_LAUNCHER_DUMP_FROM_SUMMARY_H_
#define NUMTRACE_LAUNCHER_DUMP_FROM_SUMMARY_H_

#include "absl/status/status.h"
#include "launcher/run_options.h"

namespace numtrace::launcher {

// No-op without --dump-first-divergence. Errors (no --side, --dump given
// too, unreadable summary, no divergence in it) name what is wrong.
[[nodiscard]] absl::Status ResolveDumpFromSummary(RunOptions* options);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_DUMP_FROM_SUMMARY_H_
