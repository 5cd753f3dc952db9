#include "analyzer/ranks/odd_rank.h"

#include <algorithm>
#include <memory>
#include <new>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyzer/model/trace.h"
#include "analyzer/read/digest_stream.h"
#include "analyzer/read/input.h"
#include "analyzer/read/json_fields.h"
#include "analyzer/read/line_reader.h"
#include "analyzer/read/text_util.h"
#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/trace_reader.h"
#include "common/format/environment.h"
#include "common/status/status_macros.h"

namespace numtrace::analyzer {
namespace {

// A digest of 0 marks a launch the shim could not digest (format 1.4, `lost`).
constexpr uint64_t kLostDigest = 0;

// Runs fill(i) for every i in `which`, on up to `threads` threads.
absl::Status FillAll(std::vector<std::unique_ptr<DigestStream>>& streams, const std::vector<size_t>& which,
                     int threads) {
  if (which.empty()) return absl::OkStatus();
  std::vector<absl::Status> status(which.size());
  const size_t workers = std::clamp<size_t>(std::max(threads, 1), 1, which.size());
  auto work = [&](size_t w) {
    for (size_t j = w; j < which.size(); j += workers) status[j] = streams[which[j]]->Fill(kWindowLaunches);
  };
  if (workers == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (size_t w = 0; w < workers; ++w) pool.emplace_back(work, w);
    for (std::thread& t : pool) t.join();
  }
  for (const absl::Status& s : status) {
    NT_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

// The vote on one step: `voters` are indices into `streams` whose head is that step.
void CompareStep(const std::vector<std::unique_ptr<DigestStream>>& streams, const std::vector<size_t>& voters,
                 OddRankResult* r) {
  uint64_t launches = 0;
  for (size_t v : voters) launches = std::max(launches, streams[v]->Head().kernels);
  using Key = std::pair<uint64_t, std::string_view>;  // digest, name; {0, ""}: no launch there
  absl::flat_hash_map<Key, uint64_t> votes;
  std::vector<std::pair<size_t, Key>> cast;
  for (uint64_t i = 0; i < launches; ++i) {
    votes.clear();
    cast.clear();
    for (size_t v : voters) {
      const DigestStream& s = *streams[v];
      Key key{0, std::string_view()};
      if (i < s.Head().kernels) {
        key = {s.Digest(i), s.Name(i)};
        if (key.first == kLostDigest) continue;  // not digested: no vote
      }
      ++votes[key];
      cast.emplace_back(v, key);
    }
    if (votes.size() <= 1) {
      if (cast.size() >= 2) ++r->launches_agreeing;
      continue;
    }
    auto best = std::max_element(votes.begin(), votes.end(),
                                 [](const auto& x, const auto& y) { return x.second < y.second; });
    if (2 * best->second <= cast.size()) {
      ++r->launches_own_data;
      continue;
    }
    ++r->launches_odd;
    const Key majority = best->first;
    const uint64_t m = best->second;
    for (const auto& [v, key] : cast) {
      if (key == majority) continue;
      OddRankRank& rank = r->ranks[v];
      ++rank.odd;
      if (rank.first_odd_step < 0) rank.first_odd_step = streams[v]->Head().step;
      if (r->odd_total++ >= kMaxOddListed) continue;
      r->odd.push_back({rank.rank, streams[v]->Head().step, i,
                        std::string(key.second.empty() ? majority.second : key.second), m, cast.size(), "", ""});
    }
  }
}

}  // namespace

absl::StatusOr<OddRankResult> FindOddRankOut(const std::vector<std::string>& paths, int threads) {
  OddRankResult r;
  std::vector<std::unique_ptr<DigestStream>> streams;
  for (const std::string& path : paths) {
    NT_ASSIGN_OR_RETURN(std::unique_ptr<DigestStream> s, DigestStream::Open(path));
    streams.push_back(std::move(s));
  }
  // The first window of every rank, then each rank as its header says
  // (as the trace reader decides: run.rank, else the file name, else 0).
  std::vector<size_t> all(streams.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  NT_RETURN_IF_ERROR(FillAll(streams, all, threads));
  for (size_t i = 0; i < streams.size(); ++i) {
    const TraceHeader& h = streams[i]->header();
    OddRankRank& rank = r.ranks.emplace_back();
    rank.path = paths[i];
    rank.rank = h.run ? h.run->rank : RankFromFileName(paths[i]).value_or(0);
    if (h.run) rank.host = h.run->host;
  }
  uint64_t single_steps = 0;
  while (true) {
    std::vector<size_t> starving;
    for (size_t i = 0; i < streams.size(); ++i) {
      if (streams[i]->empty() && !streams[i]->ended()) starving.push_back(i);
    }
    if (!starving.empty()) {
      NT_RETURN_IF_ERROR(FillAll(streams, starving, threads));
      continue;
    }
    // Every rank has a step buffered or has ended: vote on the lowest step.
    int64_t step = 0;
    bool any = false;
    for (const auto& s : streams) {
      if (s->empty()) continue;
      step = any ? std::min(step, s->Head().step) : s->Head().step;
      any = true;
    }
    if (!any) break;
    std::vector<size_t> voters;
    for (size_t i = 0; i < streams.size(); ++i) {
      if (!streams[i]->empty() && streams[i]->Head().step == step) voters.push_back(i);
    }
    if (voters.size() >= 2) {
      CompareStep(streams, voters, &r);
      if (r.steps_compared++ == 0) r.first_step = step;
      r.last_step = std::max(r.last_step, step);
    } else {
      ++single_steps;
    }
    for (size_t v : voters) streams[v]->Pop();
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    const DigestStream& s = *streams[i];
    OddRankRank& rank = r.ranks[i];
    // An environment record may come late (the hooks start after the shim).
    if (const std::string* gpu = FindEnvironmentValue(s.header().environment, "gpu.uuid")) rank.gpu = *gpu;
    rank.steps = s.steps();
    rank.truncated = s.truncated();
    if (rank.steps == 0) {
      return absl::FailedPreconditionError(
          Cat("nothing was compared: ", s.path(),
                       " holds no digest records (capture every rank with numtrace run --watch)"));
    }
    if (rank.truncated) r.notes.push_back(Cat("rank ", rank.rank, " (", s.path(), ") was cut short after ",
                                                       rank.steps, " steps: its later steps were not compared"));
  }
  if (r.steps_compared == 0) {
    return absl::FailedPreconditionError("nothing was compared: no step number is held by two ranks");
  }
  if (streams.size() == 2) {
    r.notes.push_back("2 ranks: neither can be outvoted, so a launch where they differ counts as each rank's own "
                      "data (3 or more ranks name an odd one out; diff the two traces with numtrace diff A B)");
  }
  if (single_steps > 0) {
    r.notes.push_back(Cat(single_steps, " step(s) held by one rank only were not compared"));
  }
  for (OddRankOut& o : r.odd) {
    for (const OddRankRank& k : r.ranks) {
      if (k.rank == o.rank) {
        o.host = k.host;
        o.gpu = k.gpu;
        break;
      }
    }
  }
  return r;
}

}  // namespace numtrace::analyzer
