#include "analyzer/cli/merge_command.h"

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "analyzer/cli/error_line.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/report/summary_merge.h"
#include "common/format/diff_summary.h"
#include "common/io/bounded_file.h"

namespace numtrace::analyzer {
namespace {

// "4-7, 12" for the ranks no shard has; `count` ranks in all.
std::string Ranges(const std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t& count) {
  std::string out;
  count = 0;
  for (const auto& [first, last] : ranges) {
    if (!out.empty()) out.append(", ");
    out.append(std::to_string(first));
    if (last > first) out.append("-").append(std::to_string(last));
    count += last - first + 1;
  }
  return out;
}

}  // namespace

int MergeMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> paths;
  std::string json_path;
  bool force = false, strict = false;
  CLI::App app{"numtrace merge: combine the shard summaries of one run pair (numtrace diff A B --ranks LIST "
               "--json SHARD) into the summary of the whole run"};
  app.name("numtrace merge");
  app.add_option("SHARDS", paths, "shard summaries (numtrace diff --ranks ... --json FILE)")->required();
  app.add_option("--json", json_path, "write the merged summary to FILE (- for standard output)")->required();
  app.add_flag("--force", force, "replace an existing output file");
  app.add_flag("--strict", strict, "exit 1 when the merge is incomplete (a rank in no shard, an incomplete trace)");
  app.footer(R"(Exit status: 0 identical or within tolerance, 1 diverged, 2 bad usage or input.

Example (4 shards of a 16-rank run):
  for s in 0 1 2 3; do numtrace diff runA runB --ranks $((s*4))-$((s*4+3)) --json shard$s.json; done
  numtrace merge shard0.json shard1.json shard2.json shard3.json --json summary.json)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    return FailLine(err, std::string(e.what()) + " (see --help)");
  }
  if (absl::Status s = CheckOutputs({{"--json", json_path}}, paths, force); !s.ok()) return FailLine(err, s);
  std::vector<ShardText> shards;
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> text = ReadBoundedFile(path, "the shard summary", kMaxDiffSummaryBytes);
    if (!text.ok()) return FailLine(err, text.status());
    shards.push_back({path, *std::move(text)});
  }
  absl::StatusOr<MergedSummary> merged = MergeShardSummaries(shards);
  if (!merged.ok()) return FailLine(err, merged.status());
  if (absl::Status s = WriteOutput(json_path, merged->json, force, out); !s.ok()) return FailLine(err, s);
  std::ostream& say = json_path == kStdoutPath ? err : out;  // stdout carries the JSON
  uint64_t missing = 0;
  const std::string ranges = Ranges(merged->missing, missing);
  say << "merged " << shards.size() << " shards: " << merged->of - missing << " of " << merged->of
      << " ranks, verdict " << VerdictName(merged->verdict) << "\n";
  if (missing > 0) {
    say << "incomplete: rank" << (missing > 1 ? "s " : " ") << ranges
        << " in no shard (the merged summary says complete: false and is itself a shard)\n";
  }
  if (json_path != kStdoutPath) say << "summary written to " << json_path << "\n";
  if (merged->verdict == Verdict::kDiverged) return kExitDiverged;
  return strict && !merged->complete ? kExitDiverged : kExitOk;
}

}  // namespace numtrace::analyzer
