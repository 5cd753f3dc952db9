#include "analyzer/cli/across_ranks_command.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <thread>

#include "analyzer/cli/output_file.h"
#include "analyzer/cli/diff_command.h"
#include "analyzer/report/cross_rank_report.h"
#include "analyzer/ranks/odd_rank.h"
#include "analyzer/read/digest_stream.h"
#include "analyzer/read/input.h"
#include "common/status/status_macros.h"

namespace numtrace::analyzer {

absl::StatusOr<std::vector<std::string>> RankTraceFiles(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(dir + ": --across-ranks needs a run directory (rank_<R>.ntrace.jsonl files)");
  }
  // Pairing the directory with itself applies the reader's own rules: which
  // files are traces, the rank of each, and a rank with two traces refused.
  NT_ASSIGN_OR_RETURN(const std::vector<RankPair> pairs, PairInputs(dir, dir));
  std::vector<std::string> paths;
  for (const RankPair& p : pairs) paths.push_back(p.path_a);
  if (paths.size() < 2) {
    return absl::InvalidArgumentError(dir + ": " + std::to_string(paths.size()) +
                                      " rank trace(s); --across-ranks needs at least two");
  }
  return paths;
}

namespace {

int RunOddRankOut(const AcrossRanksOptions& opt, const std::vector<std::string>& files, std::ostream& out,
                  std::ostream& err) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  absl::StatusOr<OddRankResult> result = FindOddRankOut(files, threads);
  if (!result.ok()) return FailLine(err, result.status());
  if (!opt.json_path.empty()) {
    if (absl::Status s = WriteOutput(opt.json_path, OddRankJson(*result, opt.dir), opt.force, out); !s.ok()) {
      return FailLine(err, s);
    }
  }
  if (!opt.html_path.empty()) {
    if (absl::Status s = WriteOutput(opt.html_path, OddRankHtml(*result, opt.dir), opt.force, out); !s.ok()) {
      return FailLine(err, s);
    }
  }
  const bool stdout_taken = opt.json_path == kStdoutPath || opt.html_path == kStdoutPath;
  if (!opt.quiet && !stdout_taken) {
    out << OddRankTerminal(*result, opt.dir, std::max(opt.top, 0));
    if (!opt.json_path.empty()) out << "summary written to " << opt.json_path << "\n";
    if (!opt.html_path.empty()) out << "report written to " << opt.html_path << "\n";
  }
  out.flush();
  return result->odd_total == 0 ? kExitOk : kExitDiverged;
}

}  // namespace

int RunAcrossRanks(const AcrossRanksOptions& opt, std::ostream& out, std::ostream& err) {
  // The same rule as numtrace-diff A B (output_file.h): never an input, a
  // device or a file that appeared meanwhile.
  const std::vector<OutputSpec> outputs = {{"--json", opt.json_path}, {"--html", opt.html_path}};
  if (absl::Status s = CheckOutputs(outputs, {opt.dir}, opt.force); !s.ok()) return FailLine(err, s);
  const bool stdout_taken = opt.json_path == kStdoutPath || opt.html_path == kStdoutPath;
  absl::StatusOr<std::vector<std::string>> files = RankTraceFiles(opt.dir);
  if (!files.ok()) return FailLine(err, files.status());
  // Watch traces: every launch's digest, compared step by step, streaming.
  absl::StatusOr<bool> watch = IsWatchTrace(files->front());
  if (!watch.ok()) return FailLine(err, watch.status());
  if (*watch) return RunOddRankOut(opt, *files, out, err);
  std::vector<std::unique_ptr<Trace>> traces;
  std::vector<const Trace*> views;
  for (const std::string& path : *files) {
    absl::StatusOr<Trace> t = ReadTrace(path);
    if (!t.ok()) return FailLine(err, t.status());
    traces.push_back(std::make_unique<Trace>(*std::move(t)));
    views.push_back(traces.back().get());
  }
  CrossRankResult result = CompareAcrossRanks(views);
  // Agreement over nothing is no agreement: a rank none of whose kernels
  // pairs with rank 0's was not compared at all (watch traces hold digests,
  // which this check does not compare).
  for (size_t i = 1; i < result.ranks.size(); ++i) {
    if (result.ranks[i].shared != 0) continue;
    const bool digests = !traces[0]->digests.empty() || !traces[i]->digests.empty();
    return FailLine(err, absl::FailedPreconditionError(
                             "nothing was compared: no kernel of " + result.ranks[i].path + " pairs with one of " +
                             result.ranks[0].path +
                             (digests ? " (watch-mode step digests are not compared across ranks: diff two ranks' "
                                        "traces with numtrace diff A B, or capture a step in full with --steps)"
                                      : "")));
  }
  if (!opt.json_path.empty()) {
    if (absl::Status s = WriteOutput(opt.json_path, CrossRankJson(result, opt.dir), opt.force, out); !s.ok()) {
      return FailLine(err, s);
    }
  }
  if (!opt.html_path.empty()) {
    if (absl::Status s = WriteOutput(opt.html_path, CrossRankHtml(result, opt.dir), opt.force, out); !s.ok()) {
      return FailLine(err, s);
    }
  }
  if (!opt.quiet && !stdout_taken) {
    out << CrossRankTerminal(result, opt.dir, std::max(opt.top, 0));
    if (!opt.json_path.empty()) out << "summary written to " << opt.json_path << "\n";
    if (!opt.html_path.empty()) out << "report written to " << opt.html_path << "\n";
  }
  out.flush();
  return result.mismatches.empty() ? kExitOk : kExitDiverged;
}

}  // namespace numtrace::analyzer
