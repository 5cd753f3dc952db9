#include "analyzer/read/input.h"

#include <sys/stat.h>

#include <cerrno>
#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "absl/status/status.h"
#include "analyzer/read/debugmode_reader.h"
#include "analyzer/read/line_reader.h"
#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/read/text_util.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

struct RankFiles {
  std::string chosen;
  uintmax_t size = 0;
  std::vector<std::string> others;
};

// Trace files of `dir` by rank.
absl::StatusOr<std::map<int64_t, RankFiles>> ListTraces(const std::string& dir) {
  std::map<int64_t, RankFiles> by_rank;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return absl::InvalidArgumentError(Cat(dir, ": cannot list: ", ec.message()));
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : it) {
    if (entry.is_regular_file(ec) && ParseTraceFileName(entry.path().filename().string())) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());  // deterministic choice among equal sizes
  for (const fs::path& p : files) {
    int64_t rank = ParseTraceFileName(p.filename().string())->rank;
    uintmax_t size = fs::file_size(p, ec);
    if (ec) size = 0;
    RankFiles& r = by_rank[rank];
    if (r.chosen.empty()) {
      r.chosen = p.string();
      r.size = size;
    } else if (size > r.size) {
      r.others.push_back(std::move(r.chosen));
      r.chosen = p.string();
      r.size = size;
    } else {
      r.others.push_back(p.string());
    }
  }
  if (by_rank.empty()) {
    return absl::InvalidArgumentError(Cat(
        dir, ": no trace files (rank_<R>.ntrace.jsonl, rank_<R>.pid<P>.ntrace.jsonl or "
             "rank_<R>_activations.log)"));
  }
  return by_rank;
}

void AddWarnings(const RankFiles& files, int64_t rank, RankPair* pair) {
  for (const std::string& other : files.others) {
    pair->warnings.push_back(Cat(other, ": not compared; rank ", rank,
                                          " uses the larger ", files.chosen));
  }
}

}  // namespace

TraceFormat DetectTraceFormat(std::string_view contents) {
  if (contents.starts_with("\xEF\xBB\xBF")) contents.remove_prefix(3);  // UTF-8 BOM
  contents = TrimLeft(contents);
  if (contents.empty()) return TraceFormat::kUnknown;
  if (contents[0] == '{') return TraceFormat::kNumtraceJsonl;
  if (contents[0] == '[' || contents.starts_with("Total captured activations:")) {
    return TraceFormat::kDebugModeLog;
  }
  return TraceFormat::kUnknown;
}

absl::StatusOr<Trace> ReadAnyTrace(const std::string& path) {
  absl::StatusOr<std::unique_ptr<LineReader>> opened = LineReader::Open(path);
  if (!opened.ok()) return opened.status();
  LineReader& reader = **opened;
  // The boundary for running out of memory: one line naming the file and
  // how far it was read, never an abort (also on the reading thread).
  try {
    absl::StatusOr<std::string_view> head = reader.Peek();
    if (!head.ok()) return head.status();
    switch (DetectTraceFormat(*head)) {
      case TraceFormat::kNumtraceJsonl: return ReadTraceLines(reader);
      case TraceFormat::kDebugModeLog: return ReadDebugModeLines(reader);
      case TraceFormat::kUnknown: break;
    }
    if (Trim(*head).empty()) {
      return absl::InvalidArgumentError(Cat(path, ": empty trace"));
    }
    return absl::InvalidArgumentError(
        Cat(path, ": not a numtrace trace nor a DebugMode activation log"));
  } catch (const std::bad_alloc&) {
    return reader.OutOfMemoryError();
  }
}

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
  absl::StatusOr<std::map<int64_t, RankFiles>> ranks_a = ListTraces(a);
  if (!ranks_a.ok()) return ranks_a.status();
  absl::StatusOr<std::map<int64_t, RankFiles>> ranks_b = ListTraces(b);
  if (!ranks_b.ok()) return ranks_b.status();
  for (const auto& [mine, theirs, mine_dir, their_dir] :
       {std::tuple(&*ranks_a, &*ranks_b, &a, &b), std::tuple(&*ranks_b, &*ranks_a, &b, &a)}) {
    for (const auto& [rank, files] : *mine) {
      if (!theirs->contains(rank)) {
        return absl::InvalidArgumentError(Cat("rank ", rank, " has a trace in ", *mine_dir,
                                                       " (", files.chosen, ") but none in ",
                                                       *their_dir));
      }
    }
  }
  std::vector<RankPair> pairs;
  for (const auto& [rank, files_a] : *ranks_a) {
    const RankFiles& files_b = ranks_b->at(rank);
    RankPair& pair = pairs.emplace_back();
    pair.rank = rank;
    pair.path_a = files_a.chosen;
    pair.path_b = files_b.chosen;
    AddWarnings(files_a, rank, &pair);
    AddWarnings(files_b, rank, &pair);
  }
  return pairs;
}

}  // namespace numtrace::analyzer
