#include "launcher/rank_listing.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <vector>

#include "analyzer/read/importer.h"
#include "common/text/terminal_safe.h"

namespace numtrace::launcher {

namespace fs = std::filesystem;

std::set<std::string> TraceFilesIn(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    // The files the shim writes: named as the "numtrace" importer reads them.
    std::optional<analyzer::TraceFileName> name = analyzer::ParseTraceFileName(e.path().string());
    if (name && name->importer == analyzer::FindImporter("numtrace")) out.insert(e.path().string());
  }
  return out;
}

bool FileSystemFull(const std::string& dir) {
  struct statvfs fs_info;
  return statvfs(dir.c_str(), &fs_info) == 0 && fs_info.f_bavail == 0;
}

std::string FullFileSystemLine(const std::string& dir) {
  if (!FileSystemFull(dir)) return "";
  return dir + ": its file system is full, so its trace is cut short; free space (or use another -o) and run again";
}

int ListRankTraces(const std::string& dir, std::ostream& out, const std::set<std::string>& earlier, bool ops_level,
                   std::optional<int> cuda_processes) {
  std::vector<std::tuple<int64_t, std::string>> files;
  std::set<int64_t> ranks_now, ranks_before;
  for (const std::string& path : TraceFilesIn(dir)) {
    const int64_t rank = analyzer::ParseTraceFileName(path)->rank;
    if (earlier.count(path)) {
      ranks_before.insert(rank);
    } else {
      files.emplace_back(rank, path);
      ranks_now.insert(rank);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& [rank, path] : files) {
    absl::StatusOr<analyzer::Trace> trace = analyzer::ReadTrace(path, analyzer::FindImporter("numtrace"));
    if (!trace.ok()) {
      out << "rank " << rank << ": unreadable ("
          << TerminalSafe(std::string(trace.status().message())) << "): " << TerminalSafe(path)
          << "\n";
      continue;
    }
    const bool ops = trace->header.capture && trace->header.capture->level == CaptureLevel::kOps;
    out << "rank " << rank << ": " << trace->kernels.size() << (ops ? " operator calls" : " kernels") << " captured, ";
    if (!trace->digests.empty()) out << trace->digests.size() << " steps digested, ";  // watch mode
    if (trace->truncated) {
      out << "TRUNCATED (no footer: the process was cut short";
      // A full disk ends a trace the same way; say so when it is full now.
      if (FileSystemFull(dir)) {
        out << ", or writing failed: its file system is full now";
      }
      out << ")";
    } else if (trace->footer && trace->footer->dropped > 0) {
      // The footer came, but records did not: never "complete".
      out << "INCOMPLETE: " << trace->footer->dropped << " records dropped (the writer queue was full)";
    } else {
      out << "complete";
    }
    if (trace->footer && trace->footer->unmeasured > 0) {
      out << ", " << trace->footer->unmeasured << " unmeasured";
    }
    out << ": " << TerminalSafe(path) << "\n";
  }
  size_t shared = 0;
  for (int64_t r : ranks_now) shared += ranks_before.count(r);
  if (!ranks_before.empty()) {
    const size_t n = earlier.size();
    out << n << " trace" << (n == 1 ? "" : "s") << " in " << dir << " came from an earlier run and "
        << (n == 1 ? "is" : "are") << " not listed";
    if (shared > 0) {
      out << "; numtrace diff refuses the directory while a rank has two traces there: move the earlier "
             "ones out, or diff files";
    }
    out << "\n";
  }
  if (files.empty() && ops_level) {
    out << "no trace was written in " << TerminalSafe(dir)
        << ": operator level (--ops) captured no operator call. It captures the ATen operators a PyTorch "
           "job runs eagerly in the captured steps (--steps), through the hooks (a Python job; "
           "--torch-hooks otherwise); code compiled by torch.compile is not captured (the hooks said so "
           "in one line; docs/torch-hooks.md)\n";
  } else if (files.empty() && cuda_processes == 0) {
    // Each process that reached cuInit (or a kernel launch) with the shim
    // loaded left a mark: none did.
    out << "no trace was written in " << TerminalSafe(dir)
        << ": the job never started CUDA (no process of it called cuInit with numtrace loaded), so there "
           "was no kernel to capture. A PyTorch job is captured without CUDA at operator level: "
           "numtrace run --ops\n";
  } else if (files.empty()) {
    // What numtrace knows here, no more: the settings were valid (checked
    // before the job), so either nothing launched a kernel in the captured
    // steps or the shim could not start, which it says in one stderr line.
    out << "no trace was written in " << TerminalSafe(dir) << ": ";
    if (cuda_processes) {
      out << *cuda_processes << " process" << (*cuda_processes == 1 ? "" : "es")
          << " of the job started CUDA, and none captured a kernel launch: ";
    } else {
      out << "no process of the job captured a CUDA kernel launch. A job that never starts CUDA (a "
             "CPU-only run) leaves no trace (a PyTorch job is captured without CUDA at operator level: "
             "numtrace run --ops); ";
    }
    out << "launches outside the captured steps are not captured (--steps, --step-mark); a shim that could "
           "not start says why in one 'numtrace:' line on stderr (docs/troubleshooting.md, \"nothing "
           "captured\")\n";
  }
  return static_cast<int>(files.size());
}

}  // namespace numtrace::launcher
