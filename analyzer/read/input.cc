#include "analyzer/read/input.h"

#include <sys/stat.h>

#include <cerrno>
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "absl/status/status.h"
#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/text_util.h"
#include "common/status/status_macros.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

// Trace files of one rank in one directory, sorted by name.
using RankFiles = std::vector<std::string>;

// Trace files of `dir` by rank.
absl::StatusOr<std::map<int64_t, RankFiles>> ListTraces(const std::string& dir) {
  std::map<int64_t, RankFiles> by_rank;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return absl::InvalidArgumentError(Cat(dir, ": cannot list: ", ec.message()));
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    std::optional<TraceFileName> parsed = ParseTraceFileName(name);
    if (parsed && entry.is_regular_file(ec)) by_rank[parsed->rank].push_back(entry.path().string());
  }
  if (by_rank.empty()) {
    return absl::InvalidArgumentError(Cat(
        dir, ": no trace files (rank_<R>.ntrace.jsonl, rank_<R>.pid<P>.ntrace.jsonl or "
             "rank_<R>_activations.log, each also gzip'd as NAME.gz)"));
  }
  for (auto& [rank, files] : by_rank) std::sort(files.begin(), files.end());
  return by_rank;
}

std::string FileName(const std::string& path) { return fs::path(path).filename().string(); }

std::string NameList(const RankFiles& files) {
  std::string out;
  for (const std::string& f : files) out += (out.empty() ? "" : ", ") + FileName(f);
  return out;
}

// The pair of one rank. Several files of a rank in a directory (two
// processes wrote into it: a launcher and its child, or two runs) are not
// resolved by size, age or name, whatever the other directory holds: a
// stale `rank_0.ntrace.jsonl` left by an earlier run beside this run's
// `rank_0.pid<P>...` would pair by its shared name and be compared as this
// run's. The choice is the user's.
absl::StatusOr<std::pair<std::string, std::string>> ChooseRankFiles(
    int64_t rank, const RankFiles& a, const RankFiles& b, const std::string& dir_a,
    const std::string& dir_b) {
  if (a.size() == 1 && b.size() == 1) return std::pair(a[0], b[0]);
  return absl::InvalidArgumentError(Cat(
      "rank ", rank, " has several traces: ", dir_a, " holds ", a.size(), " (", NameList(a), "), ",
      dir_b, " holds ", b.size(), " (", NameList(b),
      "); numtrace-diff does not guess which one ran the work: give the two files to compare, "
      "e.g. numtrace-diff ", a.back(), " ", b.back(), ", or move the others out of the directory"));
}

}  // namespace

absl::StatusOr<std::vector<RankPair>> PairInputs(const std::string& a, const std::string& b) {
  std::error_code ec;
  for (const std::string* p : {&a, &b}) {
    struct stat st;
    if (::stat(p->c_str(), &st) == 0) continue;
    if (errno == ELOOP) {
      return absl::InvalidArgumentError(Cat(*p, ": a symlink loop (too many levels of symbolic links)"));
    }
    if (errno == EACCES) return absl::PermissionDeniedError(Cat(*p, ": permission denied"));
    return absl::NotFoundError(Cat(*p, ": no such file or directory"));
  }
  const bool dir_a = fs::is_directory(a, ec), dir_b = fs::is_directory(b, ec);
  if (dir_a != dir_b) {
    return absl::InvalidArgumentError(Cat(
        dir_a ? a : b, " is a directory but ", dir_a ? b : a,
        " is a file: give two trace files or two directories of per-rank traces"));
  }
  if (!dir_a) {
    RankPair pair;
    pair.rank = RankFromFileName(a).value_or(RankFromFileName(b).value_or(0));
    pair.path_a = a;
    pair.path_b = b;
    return std::vector<RankPair>{std::move(pair)};
  }
  NT_ASSIGN_OR_RETURN(const auto ranks_a, ListTraces(a));  // std::map<int64_t, RankFiles>
  NT_ASSIGN_OR_RETURN(const auto ranks_b, ListTraces(b));
  for (const auto& [mine, theirs, mine_dir, their_dir] :
       {std::tuple(&ranks_a, &ranks_b, &a, &b), std::tuple(&ranks_b, &ranks_a, &b, &a)}) {
    for (const auto& [rank, files] : *mine) {
      if (!theirs->contains(rank)) {
        return absl::InvalidArgumentError(Cat("rank ", rank, " has a trace in ", *mine_dir,
                                                       " (", files.front(), ") but none in ",
                                                       *their_dir));
      }
    }
  }
  std::vector<RankPair> pairs;
  for (const auto& [rank, files_a] : ranks_a) {
    NT_ASSIGN_OR_RETURN(auto chosen, ChooseRankFiles(rank, files_a, ranks_b.at(rank), a, b));  // (path A, path B)
    RankPair& pair = pairs.emplace_back();
    pair.rank = rank;
    pair.path_a = chosen.first;
    pair.path_b = chosen.second;
  }
  return pairs;
}

}  // namespace numtrace::analyzer
