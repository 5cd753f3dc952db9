#include "launcher/dump_from_summary.h"

#include "common/format/diff_summary.h"
#include "common/status/status_macros.h"

namespace numtrace::launcher {

absl::Status ResolveDumpFromSummary(RunOptions* o) {
  if (o->dump_first_divergence.empty()) {
    if (!o->side.empty()) return absl::InvalidArgumentError("--side needs --dump-first-divergence");
    return absl::OkStatus();
  }
  const std::string& path = o->dump_first_divergence;
  if (o->side != "a" && o->side != "b") {
    return absl::InvalidArgumentError("--dump-first-divergence needs --side a or --side b");
  }
  if (!o->Get("NUMTRACE_DUMP").empty()) return absl::InvalidArgumentError("--dump and --dump-first-divergence exclude each other");
  NT_ASSIGN_OR_RETURN(const DiffSummaryView summary, ReadDiffSummary(path));
  if (!summary.first_divergence) {
    return absl::InvalidArgumentError(path + ": no first divergence in this summary (verdict " +
                                      std::string(VerdictName(summary.verdict)) + "): nothing to dump");
  }
  const FirstDivergenceView& f = *summary.first_divergence;
  const bool a = o->side == "a";
  // A bad value here is the summary's, not an option the user typed.
  o->Set("NUMTRACE_DUMP", "seq:" + std::to_string(a ? f.a_seq : f.b_seq));
  o->typed_as["NUMTRACE_DUMP"] = "--dump-first-divergence";
  if (o->Get("NUMTRACE_DUMP_EXPECT").empty()) {
    o->Set("NUMTRACE_DUMP_EXPECT", (a ? f.a_name : f.b_name) + "@");
    o->typed_as["NUMTRACE_DUMP_EXPECT"] = "--dump-first-divergence";
  }
  return absl::OkStatus();
}

}  // namespace numtrace::launcher
