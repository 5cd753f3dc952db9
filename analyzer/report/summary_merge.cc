#include "analyzer/report/summary_merge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

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

struct Ordered {  // first divergence, first NaN/Inf, origins.first, roots.first
  uint64_t order = 0;
  std::string json;
};
struct Scored {  // an entry of a `top` list
  double score = 0;
  std::string json;
};
struct SideSum {
  std::string label;
  uint64_t kernels = 0, dropped = 0, unmeasured = 0, undigested = 0;
  bool truncated = false;
};
struct RankList {  // origins or roots of one rank
  uint64_t count = 0, diverged = 0;
  std::optional<Ordered> first;
  std::vector<Scored> top;
};
struct RankEntry {
  int64_t rank = 0;
  std::string json;
  Verdict verdict = Verdict::kIdentical;
  bool complete = true;
  SideSum a, b;
  std::string tolerance;
  std::optional<std::string> environment, steps;
  std::optional<int64_t> first_differing_step;
  std::vector<std::pair<std::string, uint64_t>> counts, methods;
  std::optional<Ordered> first_divergence, nonfinite_a, nonfinite_b;
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

template <typename Parent>
std::optional<Ordered> ReadOrdered(Reader& r, Parent parent, std::string_view key, int64_t rank,
                                   std::string_view where) {
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
  return Ordered{order, WithRank(o, rank)};
}

RankList ReadRankList(Reader& r, element entry, std::string_view key, int64_t rank, std::string_view where) {
  RankList l;
  object o = r.Get<object>(entry, key, where);
  if (!r.status().ok()) return l;
  const std::string in = std::string(where) + "'s " + std::string(key);
  l.count = r.Get<uint64_t>(o, "count", in);
  if (key == "origins") l.diverged = r.Get<uint64_t>(o, "diverged", in);
  l.first = ReadOrdered(r, o, "first", rank, in);
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
    l.top.push_back({score, WithRank(to, rank)});
  }
  return l;
}

SideSum ReadSide(Reader& r, element entry, std::string_view key, std::string_view where) {
  SideSum s;
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

std::vector<std::pair<std::string, uint64_t>> ReadCounts(Reader& r, element entry, std::string_view key,
                                                         std::string_view where) {
  std::vector<std::pair<std::string, uint64_t>> out;
  const object o = r.Get<object>(entry, key, where);
  if (!r.status().ok()) return out;
  for (auto [name, value] : o) {
    uint64_t n = 0;
    if (value.get_uint64().get(n)) r.Fail(std::string(where) + "'s " + std::string(key) + " is not counts");
    out.emplace_back(std::string(name), n);
  }
  return out;
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
  x.verdict = v.value_or(Verdict::kIdentical);
  x.complete = r.Get<bool>(e, "complete", where);
  x.a = ReadSide(r, e, "a", where);
  x.b = ReadSide(r, e, "b", where);
  if (const element t = r.Get<element>(e, "tolerance", where); r.status().ok()) x.tolerance = Text(t);
  if (element env; !e["environment"].get(env)) x.environment = Text(env);
  x.counts = ReadCounts(r, e, "counts", where);
  x.methods = ReadCounts(r, e, "match_methods", where);
  x.first_divergence = ReadOrdered(r, e, "first_divergence", x.rank, where);
  element nf = r.Get<element>(e, "first_nonfinite", where);
  if (r.status().ok()) {
    x.nonfinite_a = ReadOrdered(r, nf, "a", x.rank, where + "'s first_nonfinite");
    x.nonfinite_b = ReadOrdered(r, nf, "b", x.rank, where + "'s first_nonfinite");
  }
  x.origins = ReadRankList(r, e, "origins", x.rank, where);
  x.roots = ReadRankList(r, e, "roots", x.rank, where);
  if (element steps; !e["steps"].get(steps)) {
    x.steps = Text(steps);
    if (int64_t s = 0; !steps["first_differing"].get_int64().get(s)) x.first_differing_step = s;
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

// The first by launch order; ties go to the lower rank (visited first).
void Earliest(const std::optional<Ordered>& x, const Ordered*& best) {
  if (x && (best == nullptr || x->order < best->order)) best = &*x;
}

void WriteOrdered(std::string_view key, const Ordered* o, JsonWriter& w) {
  w.Key(key);
  o ? w.Raw(o->json) : w.Null();
}

void WriteSide(std::string_view path, const std::vector<const RankEntry*>& ranks, bool side_a, JsonWriter& w) {
  SideSum sum;
  for (const RankEntry* e : ranks) {
    const SideSum& s = side_a ? e->a : e->b;
    // The common label when every rank agrees, else "" (CommonLabel).
    sum.label = e == ranks.front() ? s.label : (s.label == sum.label ? sum.label : "");
    sum.kernels += s.kernels;
    sum.truncated = sum.truncated || s.truncated;
    sum.dropped += s.dropped;
    sum.unmeasured += s.unmeasured;
    sum.undigested += s.undigested;
  }
  w.BeginObject().Key("path").String(path).Key("label").String(sum.label).Key("kernels").Uint(sum.kernels);
  w.Key("truncated").Bool(sum.truncated).Key("dropped").Uint(sum.dropped).Key("unmeasured").Uint(sum.unmeasured);
  w.Key("undigested").Uint(sum.undigested).EndObject();
}

void WriteCounts(std::string_view key, const std::vector<const RankEntry*>& ranks, bool methods, JsonWriter& w) {
  std::vector<std::pair<std::string, uint64_t>> sum;
  for (const RankEntry* e : ranks) {
    for (const auto& count : methods ? e->methods : e->counts) {
      auto it = std::find_if(sum.begin(), sum.end(), [&](const auto& p) { return p.first == count.first; });
      if (it == sum.end()) sum.push_back(count);
      else it->second += count.second;
    }
  }
  w.Key(key).BeginObject();
  for (const auto& [name, n] : sum) w.Key(name).Uint(n);
  w.EndObject();
}

// origins or roots: counts summed, `first` by launch order, `top` by score.
void WriteList(std::string_view key, const std::vector<const RankEntry*>& ranks, JsonWriter& w) {
  const bool origins = key == "origins";
  uint64_t count = 0, diverged = 0;
  size_t top_n = 0;
  const Ordered* first = nullptr;
  std::vector<const Scored*> top;
  for (const RankEntry* e : ranks) {
    const RankList& l = origins ? e->origins : e->roots;
    count += l.count;
    diverged += l.diverged;
    top_n = std::max(top_n, l.top.size());
    for (const Scored& s : l.top) top.push_back(&s);
    Earliest(l.first, first);
  }
  std::stable_sort(top.begin(), top.end(), [](const Scored* x, const Scored* y) { return x->score > y->score; });
  if (top.size() > top_n) top.resize(top_n);
  w.Key(key).BeginObject().Key("count").Uint(count);
  if (origins) w.Key("diverged").Uint(diverged);
  WriteOrdered("first", first, w);
  w.Key("top").BeginArray();
  for (const Scored* s : top) w.Raw(s->json);
  w.EndArray().EndObject();
}

// The top level of a directory summary from its per-rank entries (ascending
// rank), then the entries: the one roll-up of JsonSummary and numtrace merge.
// `shard_of`: write `shard` (these ranks of how many); `all_ranks` false:
// ranks are missing, so the summary is not complete. Sets m.json, verdict,
// complete.
void RollUp(const std::vector<const RankEntry*>& ranks, std::string_view path_a, std::string_view path_b,
            std::optional<uint64_t> shard_of, bool all_ranks, MergedSummary& m) {
  const Ordered *fd = nullptr, *nfa = nullptr, *nfb = nullptr;
  const RankEntry* fd_rank = nullptr;
  const RankEntry* steps = nullptr;  // StepsRank
  m.complete = all_ranks;
  for (const RankEntry* e : ranks) {
    m.verdict = std::max(m.verdict, e->verdict);
    m.complete = m.complete && e->complete;
    const Ordered* before = fd;
    Earliest(e->first_divergence, fd);
    if (fd != before) fd_rank = e;
    Earliest(e->nonfinite_a, nfa);
    Earliest(e->nonfinite_b, nfb);
    if (e->steps && (steps == nullptr || (e->first_differing_step && (!steps->first_differing_step ||
                                                                      *e->first_differing_step <
                                                                          *steps->first_differing_step)))) {
      steps = e;
    }
  }
  // EnvironmentRank: the first divergence's rank, else the first that has one.
  const RankEntry* env = fd_rank != nullptr && fd_rank->environment ? fd_rank : nullptr;
  for (const RankEntry* e : ranks) {
    if (env == nullptr && e->environment) env = e;
  }

  JsonWriter w(&m.json);
  w.BeginObject().Key("format").String(kDiffSummaryFormat).Key("version").Int(kDiffSummaryVersion);
  if (shard_of) {  // these ranks of how many
    w.Key(summary_key::kShard).BeginObject().Key(summary_key::kRanks).BeginArray();
    for (const RankEntry* e : ranks) w.Int(e->rank);
    w.EndArray().Key(summary_key::kShardOf).Uint(*shard_of).EndObject();
  }
  w.Key("a");
  WriteSide(path_a, ranks, true, w);
  w.Key("b");
  WriteSide(path_b, ranks, false, w);
  w.Key("tolerance");
  ranks.empty() ? w.Null() : w.Raw(ranks.front()->tolerance);
  w.Key("verdict").String(VerdictName(m.verdict));
  w.Key("complete").Bool(m.complete);
  if (env != nullptr) w.Key("environment").Raw(*env->environment);
  WriteCounts("counts", ranks, false, w);
  WriteCounts("match_methods", ranks, true, w);
  WriteOrdered("first_divergence", fd, w);
  w.Key("first_nonfinite").BeginObject();
  WriteOrdered("a", nfa, w);
  WriteOrdered("b", nfb, w);
  w.EndObject();
  WriteList("origins", ranks, w);
  if (steps != nullptr) w.Key("steps").Raw(*steps->steps);
  WriteList("roots", ranks, w);
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

  RollUp(ranks, shards[0].path_a, shards[0].path_b,
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
  RollUp(ranks, path_a, path_b, shard_of, true, m);
  return std::move(m.json);
}

}  // namespace numtrace::analyzer
