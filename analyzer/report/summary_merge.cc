#include "analyzer/report/summary_merge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "analyzer/report/rank_diff.h"
#include "common/format/diff_summary.h"
#include "common/format/enum_list.h"
#include "common/format/json_writer.h"
#include "common/status/status_macros.h"
#include "simdjson.h"

namespace numtrace::analyzer {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// A value as JsonWriter writes it: the summaries are JsonWriter's output,
// so what is copied this way is written again byte for byte.
void Copy(element e, JsonWriter& w) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT:
      w.BeginObject();
      for (auto [key, value] : object(e)) {
        w.Key(key);
        Copy(value, w);
      }
      w.EndObject();
      break;
    case simdjson::dom::element_type::ARRAY:
      w.BeginArray();
      for (element v : array(e)) Copy(v, w);
      w.EndArray();
      break;
    case simdjson::dom::element_type::STRING: w.String(std::string_view(e)); break;
    case simdjson::dom::element_type::INT64: w.Int(int64_t(e)); break;
    case simdjson::dom::element_type::UINT64: w.Uint(uint64_t(e)); break;
    case simdjson::dom::element_type::DOUBLE: w.Double(double(e)); break;
    case simdjson::dom::element_type::BOOL: w.Bool(bool(e)); break;
    case simdjson::dom::element_type::NULL_VALUE: w.Null(); break;
  }
}

std::string Text(element e) {
  std::string out;
  JsonWriter w(&out);
  Copy(e, w);
  return out;
}

// An entry of one rank as the roll-up writes it: `rank` first.
std::string WithRank(object o, int64_t rank) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key(summary_key::kRank).Int(rank);
  for (auto [key, value] : o) {
    w.Key(key);
    Copy(value, w);
  }
  w.EndObject();
  return out;
}

// The JSON text of one rank's parts, `rank` first, beside the facts the
// roll-up decides by (RollUp, rank_diff.h).
struct RankList {  // origins or roots of one rank
  std::optional<std::string> first;
  std::vector<std::string> top;
};
struct RankEntry {
  int64_t rank = 0;
  std::string json;
  RankFacts facts;
  std::string tolerance;
  std::optional<std::string> environment, steps;
  std::optional<std::string> first_divergence, nonfinite_a, nonfinite_b;
  RankList origins, roots;
};

// Reads one summary's fields; the first thing missing or mistyped is the error.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}
  const absl::Status& status() const { return status_; }
  void Fail(const std::string& what) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(path_ + ": " + what);
  }
  template <typename T, typename Parent>  // Parent: element or object
  T Get(Parent parent, std::string_view key, std::string_view where) {
    T v{};
    if (parent[key].get(v)) Fail(std::string(where) + " has no valid '" + std::string(key) + "'");
    return v;
  }

 private:
  const std::string& path_;
  absl::Status status_;
};

// An object with `order` (or null): its text with `rank` first, its order in `order`.
template <typename Parent>
std::optional<std::string> ReadOrdered(Reader& r, Parent parent, std::string_view key, int64_t rank,
                                       std::string_view where, std::optional<uint64_t>& order_out) {
  element e;
  if (parent[key].get(e)) {
    r.Fail(std::string(where) + " has no '" + std::string(key) + "'");
    return std::nullopt;
  }
  if (e.is_null()) return std::nullopt;
  uint64_t order = 0;
  if (e["order"].get_uint64().get(order)) {
    r.Fail(std::string(where) + "'s '" + std::string(key) +
           "' has no 'order' (written before numtrace merge existed: rerun numtrace diff --ranks)");
    return std::nullopt;
  }
  object o;
  if (e.get_object().get(o)) return std::nullopt;
  order_out = order;
  return WithRank(o, rank);
}

RankList ReadRankList(Reader& r, element entry, std::string_view key, int64_t rank, std::string_view where,
                      ListFacts& f) {
  RankList l;
  object o = r.Get<object>(entry, key, where);
  if (!r.status().ok()) return l;
  const std::string in = std::string(where) + "'s " + std::string(key);
  f.count = r.Get<uint64_t>(o, "count", in);
  if (key == "origins") f.diverged = r.Get<uint64_t>(o, "diverged", in);
  l.first = ReadOrdered(r, o, "first", rank, in, f.first);
  const array top = r.Get<array>(o, "top", in);
  if (!r.status().ok()) return l;  // never iterate a default (empty-handed) array
  for (element t : top) {
    object to;
    if (t.get_object().get(to)) {
      r.Fail(in + " top has a non-object");
      break;
    }
    double score = std::numeric_limits<double>::infinity();  // null: infinite
    if (!to["score"].is_null()) score = r.Get<double>(to, "score", in + " top");
    f.top_scores.push_back(score);
    l.top.push_back(WithRank(to, rank));
  }
  return l;
}

SideFacts ReadSide(Reader& r, element entry, std::string_view key, std::string_view where) {
  SideFacts s;
  object o = r.Get<object>(entry, key, where);
  if (!r.status().ok()) return s;
  const std::string in = std::string(where) + "'s " + std::string(key);
  s.label = std::string(r.Get<std::string_view>(o, "label", in));
  s.kernels = r.Get<uint64_t>(o, "kernels", in);
  s.truncated = r.Get<bool>(o, "truncated", in);
  s.dropped = r.Get<uint64_t>(o, "dropped", in);
  s.unmeasured = r.Get<uint64_t>(o, "unmeasured", in);
  s.undigested = r.Get<uint64_t>(o, "undigested", in);
  return s;
}

void ReadCounts(Reader& r, element entry, std::string_view key, std::string_view where, DiffCounts& c) {
  const object o = r.Get<object>(entry, key, where);
  if (!r.status().ok()) return;
  for (auto [name, value] : o) {
    uint64_t n = 0;
    if (value.get_uint64().get(n)) r.Fail(std::string(where) + "'s " + std::string(key) + " is not counts");
    // A count this version does not know (a later numtrace's) is skipped:
    // readers ignore unknown fields (docs/format.md, section 1).
    AddCount(name, key == "match_methods", n, c);
  }
}

RankEntry ReadEntry(Reader& r, element e) {
  RankEntry x;
  x.rank = r.Get<int64_t>(e, summary_key::kRank, "an entry of 'ranks'");
  if (!r.status().ok()) return x;
  const std::string where = "rank " + std::to_string(x.rank);
  x.json = Text(e);
  const std::optional<Verdict> v =
      EnumFromName<Verdict>(kVerdictNames, r.Get<std::string_view>(e, "verdict", where));
  if (!v) r.Fail(where + "'s verdict is none of identical, within_tolerance, diverged");
  RankFacts& f = x.facts;
  f.verdict = v.value_or(Verdict::kIdentical);
  f.complete = r.Get<bool>(e, "complete", where);
  f.a = ReadSide(r, e, "a", where);
  f.b = ReadSide(r, e, "b", where);
  if (const element t = r.Get<element>(e, "tolerance", where); r.status().ok()) x.tolerance = Text(t);
  if (element env; !e["environment"].get(env)) x.environment = Text(env);
  f.has_environment = x.environment.has_value();
  ReadCounts(r, e, "counts", where, f.counts);
  ReadCounts(r, e, "match_methods", where, f.counts);
  x.first_divergence = ReadOrdered(r, e, "first_divergence", x.rank, where, f.first_divergence);
  element nf = r.Get<element>(e, "first_nonfinite", where);
  if (r.status().ok()) {
    x.nonfinite_a = ReadOrdered(r, nf, "a", x.rank, where + "'s first_nonfinite", f.first_nonfinite_a);
    x.nonfinite_b = ReadOrdered(r, nf, "b", x.rank, where + "'s first_nonfinite", f.first_nonfinite_b);
  }
  x.origins = ReadRankList(r, e, "origins", x.rank, where, f.origins);
  x.roots = ReadRankList(r, e, "roots", x.rank, where, f.roots);
  if (element steps; !e["steps"].get(steps)) {
    x.steps = Text(steps);
    f.has_steps = true;
    if (int64_t s = 0; !steps["first_differing"].get_int64().get(s)) f.first_differing_step = s;
  }
  return x;
}

struct Shard {
  uint64_t of = 0;
  std::string path_a, path_b, tolerance;
  std::vector<RankEntry> ranks;
};

absl::StatusOr<Shard> ReadShard(const ShardText& in) {
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(in.json).get(root) || !root.is_object()) {
    return absl::InvalidArgumentError(in.path + ": not a JSON object");
  }
  std::string_view format;
  if (root["format"].get(format) || format != kDiffSummaryFormat) {
    return absl::InvalidArgumentError(in.path + ": not a numtrace-diff summary (format field)");
  }
  if (int64_t version = 0; root["version"].get(version) || version != kDiffSummaryVersion) {
    return absl::InvalidArgumentError(in.path + ": a summary of another version (this numtrace reads " +
                                      std::to_string(kDiffSummaryVersion) + ")");
  }
  element shard;
  if (root[summary_key::kShard].get(shard)) {
    return absl::InvalidArgumentError(in.path + ": not a shard (no '" + std::string(summary_key::kShard) +
                                      "': written without numtrace diff --ranks)");
  }
  Reader r(in.path);
  Shard s;
  s.of = r.Get<uint64_t>(shard, summary_key::kShardOf, "shard");
  const array listed_json = r.Get<array>(shard, summary_key::kRanks, "shard");
  const object a = r.Get<object>(root, "a", "the summary"), b = r.Get<object>(root, "b", "the summary");
  const array entries = r.Get<array>(root, summary_key::kRanks, "the summary");
  NT_RETURN_IF_ERROR(r.status());  // the containers below exist
  std::vector<int64_t> listed;
  for (element e : listed_json) {
    int64_t rank = -1;
    if (e.get_int64().get(rank)) return absl::InvalidArgumentError(in.path + ": its shard's ranks are not integers");
    listed.push_back(rank);
  }
  s.path_a = std::string(r.Get<std::string_view>(a, "path", "a"));
  s.path_b = std::string(r.Get<std::string_view>(b, "path", "b"));
  if (const element t = r.Get<element>(root, "tolerance", "the summary"); r.status().ok()) s.tolerance = Text(t);
  for (element e : entries) {
    if (!r.status().ok()) break;
    s.ranks.push_back(ReadEntry(r, e));
  }
  NT_RETURN_IF_ERROR(r.status());
  std::vector<int64_t> have;
  for (const RankEntry& e : s.ranks) have.push_back(e.rank);
  if (have != listed || !std::is_sorted(have.begin(), have.end())) {
    return absl::InvalidArgumentError(in.path + ": its 'ranks' entries are not the ranks its 'shard' lists");
  }
  for (int64_t rank : have) {
    if (rank < 0 || static_cast<uint64_t>(rank) >= s.of) {
      return absl::InvalidArgumentError(in.path + ": rank " + std::to_string(rank) + " is not one of the " +
                                        std::to_string(s.of) + " its 'shard' says the run has");
    }
  }
  return s;
}

void WriteOptional(std::string_view key, const std::optional<std::string>& json, JsonWriter& w) {
  w.Key(key);
  json ? w.Raw(*json) : w.Null();
}

// origins or roots as RollUp ranked them.
void WriteList(std::string_view key, const std::vector<const RankEntry*>& ranks, const RolledUpList& up,
               RankList RankEntry::*list, JsonWriter& w) {
  w.Key(key).BeginObject().Key("count").Uint(up.count);
  if (key == "origins") w.Key("diverged").Uint(up.diverged);
  WriteOptional("first", up.first_rank < 0 ? std::nullopt : (ranks[up.first_rank]->*list).first, w);
  w.Key("top").BeginArray();
  for (const RankedEntry& t : up.top) w.Raw((ranks[t.rank]->*list).top[t.entry]);
  w.EndArray().EndObject();
}

// The top level of a directory summary from its per-rank entries (ascending
// rank), as RollUp decides it, then the entries: the one roll-up of
// JsonSummary and numtrace merge. `shard_of`: write `shard` (these ranks of
// how many); `all_ranks` false: ranks are missing, so the summary is not
// complete. Sets m.json, verdict, complete.
void WriteRollUp(const std::vector<const RankEntry*>& ranks, std::string_view path_a, std::string_view path_b,
                 std::optional<uint64_t> shard_of, bool all_ranks, MergedSummary& m) {
  std::vector<RankFacts> facts;
  facts.reserve(ranks.size());
  for (const RankEntry* e : ranks) facts.push_back(e->facts);
  const RolledUp up = RollUp(facts);
  m.verdict = up.verdict;
  m.complete = all_ranks && up.complete;
  // The JSON of the rank RollUp picked for `part`, or none.
  auto of = [&](int rank, std::optional<std::string> RankEntry::*part) {
    return rank < 0 ? std::nullopt : ranks[rank]->*part;
  };

  JsonWriter w(&m.json);
  w.BeginObject().Key("format").String(kDiffSummaryFormat).Key("version").Int(kDiffSummaryVersion);
  if (shard_of) {  // these ranks of how many
    w.Key(summary_key::kShard).BeginObject().Key(summary_key::kRanks).BeginArray();
    for (const RankEntry* e : ranks) w.Int(e->rank);
    w.EndArray().Key(summary_key::kShardOf).Uint(*shard_of).EndObject();
  }
  w.Key("a");
  WriteSideJson(path_a, up.a, nullptr, w);
  w.Key("b");
  WriteSideJson(path_b, up.b, nullptr, w);
  w.Key("tolerance");
  ranks.empty() ? w.Null() : w.Raw(ranks.front()->tolerance);
  w.Key("verdict").String(VerdictName(m.verdict));
  w.Key("complete").Bool(m.complete);
  if (const auto env = of(up.environment_rank, &RankEntry::environment)) w.Key("environment").Raw(*env);
  WriteCountsJson(up.counts, w);
  WriteOptional("first_divergence", of(up.first_divergence_rank, &RankEntry::first_divergence), w);
  w.Key("first_nonfinite").BeginObject();
  WriteOptional("a", of(up.first_nonfinite_a_rank, &RankEntry::nonfinite_a), w);
  WriteOptional("b", of(up.first_nonfinite_b_rank, &RankEntry::nonfinite_b), w);
  w.EndObject();
  WriteList("origins", ranks, up.origins, &RankEntry::origins, w);
  if (const auto steps = of(up.steps_rank, &RankEntry::steps)) w.Key("steps").Raw(*steps);
  WriteList("roots", ranks, up.roots, &RankEntry::roots, w);
  w.Key(summary_key::kRanks).BeginArray();
  for (const RankEntry* e : ranks) w.Raw(e->json);
  w.EndArray().EndObject();
  m.json.push_back('\n');
}

}  // namespace

absl::StatusOr<MergedSummary> MergeShardSummaries(const std::vector<ShardText>& inputs) {
  if (inputs.empty()) return absl::InvalidArgumentError("no shard summaries to merge");
  std::vector<Shard> shards;
  std::map<int64_t, size_t> owner;  // rank -> index of the shard that has it
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::StatusOr<Shard> s = ReadShard(inputs[i]);
    if (!s.ok()) return s.status();
    const std::string& path = inputs[i].path;
    const std::string& first = inputs[0].path;
    if (i > 0) {
      const Shard& f = shards[0];
      if (s->of != f.of) {
        return absl::InvalidArgumentError(path + ": a shard of a run of " + std::to_string(s->of) + " ranks, " +
                                          first + " of " + std::to_string(f.of) + ": not the same run");
      }
      if (s->path_a != f.path_a || s->path_b != f.path_b) {
        return absl::InvalidArgumentError(path + ": compares " + s->path_a + " with " + s->path_b + ", " + first +
                                          " " + f.path_a + " with " + f.path_b + ": not the same runs");
      }
      if (s->tolerance != f.tolerance) {
        return absl::InvalidArgumentError(path + ": compared with tolerance " + s->tolerance + ", " + first +
                                          " with " + f.tolerance);
      }
    }
    for (const RankEntry& e : s->ranks) {
      if (auto [it, fresh] = owner.emplace(e.rank, i); !fresh) {
        if (it->second == i) return absl::InvalidArgumentError(path + ": rank " + std::to_string(e.rank) + " twice");
        return absl::InvalidArgumentError(path + ": rank " + std::to_string(e.rank) + " is also in " +
                                          inputs[it->second].path + (inputs[it->second].path == path
                                                                         ? " (the same file given twice)"
                                                                         : " (shards overlap)"));
      }
    }
    shards.push_back(*std::move(s));
  }
  std::vector<const RankEntry*> ranks;  // ascending rank, as the full diff visits them
  for (const auto& [rank, i] : owner) {
    for (const RankEntry& e : shards[i].ranks) {
      if (e.rank == rank) ranks.push_back(&e);
    }
  }
  if (ranks.empty()) return absl::InvalidArgumentError(inputs[0].path + ": its shard lists no ranks");
  MergedSummary m;
  m.of = shards[0].of;
  // The gaps between the ranks present, as ranges: `of` is read from a file,
  // so it is never counted through one by one.
  uint64_t next = 0;
  for (const auto& [rank, i] : owner) {
    if (static_cast<uint64_t>(rank) > next) m.missing.push_back({next, static_cast<uint64_t>(rank) - 1});
    next = static_cast<uint64_t>(rank) + 1;
  }
  if (next < m.of) m.missing.push_back({next, m.of - 1});

  WriteRollUp(ranks, shards[0].path_a, shards[0].path_b,
         m.missing.empty() ? std::nullopt : std::optional<uint64_t>(m.of),  // still a shard: the ranks it has
         m.missing.empty(), m);
  return m;
}

absl::StatusOr<std::string> RollUpRankEntries(std::string_view path_a, std::string_view path_b,
                                              const std::vector<std::string>& entries,
                                              std::optional<uint64_t> shard_of) {
  const std::string where = "the per-rank summary";
  Reader r(where);
  std::vector<RankEntry> read;
  read.reserve(entries.size());
  for (const std::string& text : entries) {
    simdjson::dom::parser parser;
    element e;
    if (parser.parse(text).get(e)) return absl::InternalError(where + ": not JSON");
    read.push_back(ReadEntry(r, e));
    NT_RETURN_IF_ERROR(r.status());
  }
  std::vector<const RankEntry*> ranks;
  for (const RankEntry& e : read) ranks.push_back(&e);
  MergedSummary m;
  WriteRollUp(ranks, path_a, path_b, shard_of, true, m);
  return std::move(m.json);
}

}  // namespace numtrace::analyzer
