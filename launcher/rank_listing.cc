#include "launcher/rank_listing.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <vector>

#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/report/terminal_text.h"

namespace numtrace::launcher {

namespace fs = std::filesystem;

int ListRankTraces(const std::string& dir, std::ostream& out) {
  std::vector<std::tuple<int64_t, std::string>> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::optional<analyzer::TraceFileName> name = analyzer::ParseTraceFileName(e.path().string());
    if (name && name->kind == analyzer::TraceFileKind::kNumtrace) {
      files.emplace_back(name->rank, e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& [rank, path] : files) {
    absl::StatusOr<analyzer::Trace> trace = analyzer::ReadTraceFile(path);
    if (!trace.ok()) {
      out << "rank " << rank << ": unreadable ("
          << analyzer::TerminalSafe(std::string(trace.status().message())) << "): " << analyzer::TerminalSafe(path)
          << "\n";
      continue;
    }
    out << "rank " << rank << ": " << trace->kernels.size() << " kernels captured, ";
    if (!trace->digests.empty()) out << trace->digests.size() << " steps digested, ";  // watch mode
    if (trace->truncated) {
      out << "TRUNCATED (no footer: the process was cut short)";
    } else {
      out << "complete";
    }
    if (trace->footer && trace->footer->dropped > 0) out << ", " << trace->footer->dropped << " dropped";
    if (trace->footer && trace->footer->unmeasured > 0) {
      out << ", " << trace->footer->unmeasured << " unmeasured";
    }
    out << ": " << analyzer::TerminalSafe(path) << "\n";
  }
  if (files.empty()) {
    out << "no trace was written in " << analyzer::TerminalSafe(dir)
        << ": the job made no CUDA launch in the captured steps, or numtrace stayed off "
           "(its stderr line says why; see docs/troubleshooting.md, \"nothing captured\")\n";
  }
  return static_cast<int>(files.size());
}

}  // namespace numtrace::launcher
