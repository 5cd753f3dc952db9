#include "analyzer/cli/diff_command.h"

#include <sys/resource.h>

#include "common/version/version.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "analyzer/align/aligner.h"
#include "analyzer/align/override_file.h"
#include "analyzer/cli/across_ranks_command.h"
#include "analyzer/cli/rank_list.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/cli/tensor_command.h"
#include "analyzer/judge/judge.h"
#include "analyzer/judge/step_finder.h"
#include "analyzer/judge/value_compare.h"
#include "analyzer/read/input.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_summary.h"
#include "common/status/status_macros.h"
#include "common/text/terminal_safe.h"

namespace numtrace::analyzer {
namespace {

struct RankData {
  int64_t rank = 0;
  Trace a, b;
  DiffResult result;
};

// Reads both traces of a rank, B on a second thread (parsing dominates).
absl::Status ReadPair(const RankPair& pair, RankData* data) {
  absl::StatusOr<Trace> b_or = absl::UnknownError("not read");
  std::optional<std::thread> reader_b;
  // Whatever escapes a reader (it reports running out of memory itself)
  // must not end the process through a joinable thread or a thread's throw.
  auto read_b = [&] {
    try {
      b_or = ReadTrace(pair.path_b);
    } catch (...) {
      b_or = absl::ResourceExhaustedError("out of memory");
    }
  };
  // A second reader costs address space (its malloc arena reserves 64 MiB,
  // its stack 8 MiB) and holds both readers' estimates at once: under a tight
  // address-space limit (ulimit -v below 1 GiB) read B after A.
  struct rlimit as_limit {};
  const bool tight = getrlimit(RLIMIT_AS, &as_limit) == 0 && as_limit.rlim_cur != RLIM_INFINITY &&
                     as_limit.rlim_cur < (rlim_t{1} << 30);
  try {
    if (!tight) reader_b.emplace(read_b);
  } catch (const std::system_error&) {
    // No thread to be had (a process or address-space limit): read B after A.
  }
  absl::StatusOr<Trace> a_or = absl::UnknownError("not read");
  try {
    a_or = ReadTrace(pair.path_a);
  } catch (...) {
    if (reader_b) reader_b->join();
    throw;
  }
  if (reader_b) reader_b->join();
  else read_b();
  NT_RETURN_IF_ERROR(a_or.status());
  NT_RETURN_IF_ERROR(b_or.status());
  data->a = *std::move(a_or);
  data->b = *std::move(b_or);
  return absl::OkStatus();
}

}  // namespace

int RunDiffCommand(const DiffCommandOptions& opt, std::ostream& out, std::ostream& err,
                   bool stdout_is_tty) {
  namespace fs = std::filesystem;
  // Refuse before any work: a long diff must not end in "file exists", and
  // no output may replace an input (docs in output_file.h).
  const std::vector<OutputSpec> outputs = {{"--json", opt.json_path}, {"--html", opt.html_path}};
  if (absl::Status s = CheckOutputs(outputs, {opt.a, opt.b, opt.override_path}, opt.force); !s.ok()) {
    return FailLine(err, s);
  }
  const bool stdout_taken = opt.json_path == kStdoutPath || opt.html_path == kStdoutPath;

  AlignOptions align_options;
  if (!opt.override_path.empty()) {
    absl::StatusOr<Overrides> overrides = ReadOverrideFile(opt.override_path);
    if (!overrides.ok()) return FailLine(err, overrides.status());
    align_options.overrides = *std::move(overrides);
  }

  absl::StatusOr<std::vector<RankPair>> pairs = PairInputs(opt.a, opt.b);
  if (!pairs.ok()) return FailLine(err, pairs.status());
  if (pairs->empty()) return FailLine(err, opt.a + ": no traces to compare");
  std::optional<uint64_t> shard_of;
  if (opt.ranks) {
    std::error_code ec;
    if (!fs::is_directory(opt.a, ec)) {
      return FailLine(err, "--ranks needs two run directories (rank_<R>.ntrace.jsonl files), not " + opt.a);
    }
    shard_of = pairs->size();
    std::vector<RankPair> kept;
    for (int64_t rank : *opt.ranks) {
      auto it = std::find_if(pairs->begin(), pairs->end(), [rank](const RankPair& p) { return p.rank == rank; });
      if (it == pairs->end()) {
        return FailLine(err, "--ranks: rank " + std::to_string(rank) + " is not in " + opt.a + " (" +
                                 std::to_string(pairs->size()) + " ranks, " + std::to_string(pairs->front().rank) +
                                 " to " + std::to_string(pairs->back().rank) + ")");
      }
      kept.push_back(std::move(*it));
    }
    *pairs = std::move(kept);
  }

  JudgeOptions judge_options;
  judge_options.tolerance = {opt.rtol, opt.atol};
  judge_options.top_n = static_cast<size_t>(std::max(opt.top, 0));

  // unique_ptr: the report borrows pointers into each rank's data.
  std::vector<std::unique_ptr<RankData>> ranks;
  for (const RankPair& pair : *pairs) {
    auto data = std::make_unique<RankData>();
    data->rank = pair.rank;
    if (absl::Status s = ReadPair(pair, data.get()); !s.ok()) return FailLine(err, s);
    Alignment alignment = Align(data->a, data->b, align_options);
    data->result = Judge(data->a, data->b, std::move(alignment), judge_options);
    // Watch mode: digests are exact, so a differing step means the runs diverged.
    data->result.steps = FindSteps(data->a, data->b);
    if (data->result.steps && data->result.steps->first_differing) data->result.verdict = Verdict::kDiverged;
    // Steps with no counterpart were not looked at: as with unpaired kernels,
    // never a clean `identical` (and the comparison is incomplete: rank_diff.h).
    if (data->result.steps && (data->result.steps->unpaired_a != 0 || data->result.steps->unpaired_b != 0) &&
        data->result.verdict == Verdict::kIdentical) {
      data->result.verdict = Verdict::kWithinTolerance;
    }
    for (const std::string& w : pair.warnings) data->result.alignment.warnings.push_back(w);
    ranks.push_back(std::move(data));
  }
  // Zero compared pairs is not a clean bill: nothing was looked at (unless
  // watch-mode digests compared whole steps). Two traces whose values share
  // no fingerprint (a log's printed norms against byte hashes) compare
  // nothing: whatever pairs by chance means nothing.
  for (const auto& r : ranks) {
    const bool steps_compared = r->result.steps && r->result.steps->compared != 0;
    const bool comparable = ValuesComparable(r->a, r->b);
    if ((r->result.counts.pairs != 0 || steps_compared) && comparable) continue;
    std::string why;
    if (!comparable) {
      why = "a " + std::string(r->a.kind) + " against a " + std::string(r->b.kind) + " (" + r->a.path + ", " +
            r->b.path + "): their values have no fingerprint in common, nothing to pair";
    } else if (r->a.digests.empty() != r->b.digests.empty()) {
      const Trace& watch = r->a.digests.empty() ? r->b : r->a;
      const Trace& plain = r->a.digests.empty() ? r->a : r->b;
      const bool watched = plain.header.capture && !plain.header.capture->watch.empty();
      why = watched ? plain.path + " was captured with --watch but holds no step digest" +
                          (plain.truncated ? " (cut short before its first step's record)" : "") +
                          ", and no kernel record pairs with " + watch.path
                    : watch.path + " holds step digests (watch mode) and " + plain.path +
                          " none, and their kernel records do not pair: capture both with --watch, or both with "
                          "--steps";
    } else if (!r->a.digests.empty() && !r->b.digests.empty()) {
      // Both watch traces, no step number in common: the step finder's note says which steps each has.
      why = r->a.path + " and " + r->b.path + " share no step number";
      if (r->result.steps && !r->result.steps->notes.empty()) {
        for (const std::string& n : r->result.steps->notes) {
          if (n.starts_with("no step number is in both traces")) why = n;
        }
      }
    } else if (r->a.kernels.empty() || r->b.kernels.empty()) {
      why = (r->a.kernels.empty() ? r->a.path : r->b.path) + " holds no kernel records";
    } else {
      why = "no kernel of " + r->a.path + " pairs with one of " + r->b.path;
    }
    return FailLine(err, absl::FailedPreconditionError("nothing was compared: " + why));
  }

  std::error_code ec;
  DiffReport report{opt.a, opt.b, fs::is_directory(opt.a, ec), {}, shard_of};
  for (const auto& r : ranks) report.ranks.push_back({r->rank, &r->a, &r->b, &r->result});

  std::string json;
  if (!opt.json_path.empty() || opt.summary != nullptr) json = JsonSummary(report);
  if (!opt.json_path.empty()) {
    if (absl::Status s = WriteOutput(opt.json_path, json, opt.force, out); !s.ok()) {
      return FailLine(err, s);
    }
  }
  if (opt.summary != nullptr) {
    absl::StatusOr<DiffSummaryView> view = ParseDiffSummary(json, "numtrace-diff summary");
    if (!view.ok()) return FailLine(err, view.status());
    *opt.summary = *std::move(view);
  }
  if (!opt.html_path.empty()) {
    HtmlOptions html_options;
    html_options.top = std::max(opt.top, 0);
    if (absl::Status s = WriteOutput(opt.html_path, HtmlReport(report, html_options), opt.force, out);
        !s.ok()) {
      return FailLine(err, s);
    }
  }
  // An output on standard output owns it: no summary mixed into the JSON.
  if (!opt.quiet && !stdout_taken) {
    TerminalOptions term;
    term.color = ShouldUseColor(opt.color, stdout_is_tty);
    term.top = std::max(opt.top, 0);
    term.verbose = opt.verbose;
    out << TerminalSummary(report, term);
    if (shard_of) {
      out << "shard: " << report.ranks.size() << " of " << *shard_of
          << " ranks compared (--ranks); the verdict covers these ranks only\n";
    }
    if (!opt.json_path.empty()) out << "summary written to " << opt.json_path << "\n";
    if (!opt.html_path.empty()) out << "report written to " << opt.html_path << "\n";
  }
  out.flush();
  // Fewer kernels compared than ran is not a clean bill: say so even under --quiet.
  const std::string incomplete = IncompleteReason(report);
  if (!incomplete.empty()) {
    err << ErrorLine(ProgramName(), "warning: incomplete comparison: " + incomplete);
    if (opt.strict) return kExitDiverged;
  }
  return RollUpRanks(report).verdict == Verdict::kDiverged ? kExitDiverged : kExitOk;
}

int DiffMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
             bool stdout_is_tty) {
  DiffCommandOptions opt;
  std::string color = "auto";
  const CLI::Validator kTolerance(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) {
          return "'" + text + "' is not a finite number >= 0";
        }
        return "";
      },
      "NUMBER>=0");
  CLI::App app{"numtrace-diff: compare two numtrace traces (or per-rank directories) and find "
               "the first kernel where the runs diverge"};
  app.name("numtrace-diff");
  std::string across_ranks;
  app.add_option("A", opt.a, "trace file or directory of run A");
  app.add_option("B", opt.b, "trace file or directory of run B");
  app.add_option("--across-ranks", across_ranks,
                 "instead of A B: check one run's ranks against rank 0 (replicas must agree)");
  std::string ranks;
  app.add_option("--ranks", ranks,
                 "compare only these ranks of two run directories (0-15, 3,7,9): a shard of the diff, "
                 "its summary marked `shard`");
  app.add_option("--json", opt.json_path, "write the JSON diff summary to FILE (- for standard output)");
  app.add_option("-o,--html", opt.html_path, "write the self-contained HTML report to FILE (- for standard output)");
  app.add_option("--rtol", opt.rtol, "least relative threshold of every statistic (default 1e-5; the "
                 "calibrated per-dtype thresholds apply above it, a larger value loosens all)")->check(kTolerance);
  app.add_option("--atol", opt.atol, "absolute slack added to every threshold (default 0)")->check(kTolerance);
  app.add_option("--override", opt.override_path, "file of forced pairs: lines 'A_KEY, B_KEY'");
  app.add_option("--top", opt.top, "largest divergences listed (default 10)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--force", opt.force, "replace existing output files (never an input, never a non-regular file)");
  app.add_option("--color", color, "auto, always or never (auto: only on a terminal, unless NO_COLOR)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("-q,--quiet", opt.quiet, "print nothing; the exit code tells the verdict");
  app.add_flag("--verbose", opt.verbose, "also list the capture counters that are 0");
  app.add_flag("--strict", opt.strict, "exit 1 when the comparison is incomplete (a trace cut short, "
               "records dropped, kernels unmeasured), whatever the verdict");
  bool tensors = false;
  std::string dtype;
  app.add_flag("--tensors", tensors,
               "A and B are tensor dumps of one launch (dump directories, dump_*.json sidecars or "
               ".npy files): compare them element by element");
  app.add_option("--dtype", dtype, "with --tensors and .npy files: their dtype (f32, bf16, f8e4m3, ...)");
  app.footer(R"(Exit status: 0 identical or within tolerance, 1 diverged, 2 bad usage or input.

Examples:
  numtrace-diff runA runB                                  # directories: paired by rank
  numtrace-diff runA runB --json summary.json -o report.html
  numtrace-diff runA/rank_0.ntrace.jsonl runB/rank_0.ntrace.jsonl --rtol 1e-3
  numtrace-diff a_activations.log b_activations.log        # torchtitan DebugMode logs
  numtrace-diff runA runB --strict --json summary.json      # CI gate: incomplete traces fail
  numtrace-diff runA runB --ranks 0-15 --json shard0.json   # a shard: ranks 0 to 15 only
  numtrace-diff --across-ranks runA --json ranks.json -o ranks.html
  numtrace-diff --tensors dumpA dumpB -o tensors.html           # element view of one dumped launch)");
  // The program's own name: numtrace-diff, or `numtrace diff` through the command.
  const std::string program = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "numtrace-diff";
  app.set_version_flag("--version", (program == "diff" ? "numtrace diff" : program) + " " + kVersion);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& v) {
    out << v.what() << "\n";
    return kExitOk;
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return FailLine(err, std::string(e.what()) + " (see --help)");
  }
  if (!across_ranks.empty()) {  // its own code path: analyzer/cli/across_ranks_command.h
    if (!opt.a.empty()) return FailLine(err, "--across-ranks takes one run directory, not A B (see --help)");
    return RunAcrossRanks({across_ranks, opt.json_path, opt.html_path, opt.top, opt.force, opt.quiet}, out, err);
  }
  if (opt.a.empty() || opt.b.empty()) return FailLine(err, "A and B are required (see --help)");
  if (!ranks.empty()) {
    absl::StatusOr<std::vector<int64_t>> list = ParseRankList(ranks);
    if (!list.ok()) return FailLine(err, list.status());
    opt.ranks = *std::move(list);
  }
  opt.color = color == "always" ? ColorMode::kAlways : color == "never" ? ColorMode::kNever : ColorMode::kAuto;
  // Reading reports running out of memory itself (naming the file); this
  // catches what comes after: aligning, judging, the reports.
  try {
    if (tensors || !dtype.empty()) {
      if (!tensors) return FailLine(err, "--dtype needs --tensors (see --help)");
      if (!opt.override_path.empty()) return FailLine(err, "--override does not apply to --tensors (see --help)");
      TensorCommandOptions t{opt.a, opt.b, opt.json_path, opt.html_path, std::nullopt,
                             opt.rtol, opt.atol, opt.force, opt.quiet, opt.color};
      if (!dtype.empty()) {
        DType d;
        if (!ParseDType(dtype, &d)) return FailLine(err, "--dtype '" + dtype + "' is not a trace dtype (f32, bf16, ...)");
        t.dtype = d;
      }
      return RunTensorCommand(t, out, err, stdout_is_tty);
    }
    return RunDiffCommand(opt, out, err, stdout_is_tty);
  } catch (const std::bad_alloc&) {
    return FailLine(err, "out of memory after reading both inputs (aligning, judging or writing the "
                     "reports); the diff needs more memory than this process may use");
  } catch (const std::exception& e) {  // never an abort: one line, exit 2
    return FailLine(err, std::string("internal error: ") + e.what());
  }
}

}  // namespace numtrace::analyzer
