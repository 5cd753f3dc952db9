#include "analyzer/report/json_summary.h"

#include <string_view>

#include "common/format/jsonl_writer.h"

namespace numtrace::analyzer {
namespace {

void Int(uint64_t v, std::string* out) { out->append(std::to_string(v)); }

void Side(std::string_view path, std::string_view label, uint64_t kernels, bool truncated,
          std::string* out) {
  out->append("{\"path\":");
  AppendJsonString(path, out);
  out->append(",\"label\":");
  AppendJsonString(label, out);
  out->append(",\"kernels\":");
  Int(kernels, out);
  out->append(",\"truncated\":");
  out->append(truncated ? "true" : "false");
  out->push_back('}');
}

void Counts(const DiffCounts& c, std::string* out) {
  out->append("\"counts\":{\"pairs\":");
  Int(c.pairs, out);
  out->append(",\"bitwise_equal\":");    Int(c.bitwise_equal, out);
  out->append(",\"within_tolerance\":"); Int(c.within_tolerance, out);
  out->append(",\"diverged\":");         Int(c.diverged, out);
  out->append(",\"only_a\":");           Int(c.only_a, out);
  out->append(",\"only_b\":");           Int(c.only_b, out);
  out->append("},\"match_methods\":{");
  for (int m = 0; m < kMatchMethodCount; ++m) {
    if (m) out->push_back(',');
    out->push_back('"');
    out->append(MatchMethodName(static_cast<MatchMethod>(m)));
    out->append("\":");
    Int(c.by_method[m], out);
  }
  out->push_back('}');
}

void Arg(const Trace& t, const Kernel& k, int32_t buffer, std::string* out) {
  if (buffer < 0 || static_cast<uint32_t>(buffer) >= k.buffer_count) {
    out->append("null");
  } else {
    Int(t.BuffersOf(k)[buffer].arg, out);
  }
}

// `rank` >= 0 adds a "rank" field (roll-up of directory inputs).
void FirstDivergence(const RankDiff* rd, int64_t rank, std::string* out) {
  out->append("\"first_divergence\":");
  if (rd == nullptr || !rd->result->first_divergence) {
    out->append("null");
    return;
  }
  const DiffResult& res = *rd->result;
  uint32_t i = *res.first_divergence;
  const KernelPair& p = res.alignment.pairs[i];
  const PairVerdict& v = res.verdicts[i];
  const Kernel& ka = rd->a->kernels[p.a];
  const Kernel& kb = rd->b->kernels[p.b];
  out->push_back('{');
  if (rank >= 0) {
    out->append("\"rank\":");
    out->append(std::to_string(rank));
    out->push_back(',');
  }
  out->append("\"a_seq\":");   Int(ka.seq, out);
  out->append(",\"b_seq\":");  Int(kb.seq, out);
  out->append(",\"a_name\":"); AppendJsonString(rd->a->Name(ka), out);
  out->append(",\"b_name\":"); AppendJsonString(rd->b->Name(kb), out);
  out->append(",\"a_arg\":");  Arg(*rd->a, ka, v.a_buffer, out);
  out->append(",\"b_arg\":");  Arg(*rd->b, kb, v.b_buffer, out);
  out->append(",\"rel_diff\":");
  AppendJsonDouble(v.rel_diff, out);  // null when infinite (e.g. NaN appeared)
  out->append(",\"kind\":\"");
  out->append(DivergenceKind(v.status));
  out->append("\"}");
}

void Nonfinite(const Trace* t, std::optional<uint32_t> kernel, int64_t rank, std::string* out) {
  if (t == nullptr || !kernel) {
    out->append("null");
    return;
  }
  const Kernel& k = t->kernels[*kernel];
  out->push_back('{');
  if (rank >= 0) {
    out->append("\"rank\":");
    out->append(std::to_string(rank));
    out->push_back(',');
  }
  out->append("\"seq\":");
  Int(k.seq, out);
  out->append(",\"name\":");
  AppendJsonString(t->Name(k), out);
  out->push_back('}');
}

void WriteTolerance(const Tolerance& t, std::string* out) {
  out->append("\"tolerance\":{\"rtol\":");
  AppendJsonDouble(t.rtol, out);
  out->append(",\"atol\":");
  AppendJsonDouble(t.atol, out);
  out->push_back('}');
}

void Header(std::string* out) {
  out->append("{\"format\":\"numtrace-diff-summary\",\"version\":1,");
}

// The summary of one rank; `with_rank` for entries of the `ranks` list.
void RankSummary(const RankDiff& rd, std::string_view path_a, std::string_view path_b,
                 bool with_rank, std::string* out) {
  const DiffResult& res = *rd.result;
  Header(out);
  if (with_rank) {
    out->append("\"rank\":");
    out->append(std::to_string(rd.rank));
    out->push_back(',');
  }
  out->append("\"a\":");
  Side(path_a, rd.a->label, rd.a->kernels.size(), rd.a->truncated, out);
  out->append(",\"b\":");
  Side(path_b, rd.b->label, rd.b->kernels.size(), rd.b->truncated, out);
  out->push_back(',');
  WriteTolerance(res.tolerance, out);
  out->append(",\"verdict\":\"");
  out->append(VerdictName(res.verdict));
  out->append("\",");
  Counts(res.counts, out);
  out->push_back(',');
  FirstDivergence(&rd, -1, out);
  out->append(",\"first_nonfinite\":{\"a\":");
  Nonfinite(rd.a, res.first_nonfinite_a, -1, out);
  out->append(",\"b\":");
  Nonfinite(rd.b, res.first_nonfinite_b, -1, out);
  out->append("}}");
}

// Label of a side across ranks: the common label when every rank agrees.
std::string_view CommonLabel(const DiffReport& r, bool side_a) {
  std::string_view label;
  for (const RankDiff& rd : r.ranks) {
    std::string_view l = side_a ? rd.a->label : rd.b->label;
    if (&rd == &r.ranks.front()) label = l;
    else if (l != label) return "";
  }
  return label;
}

}  // namespace

std::string JsonSummary(const DiffReport& report) {
  std::string out;
  if (!report.per_rank && report.ranks.size() == 1) {
    RankSummary(report.ranks[0], report.path_a, report.path_b, false, &out);
    out.push_back('\n');
    return out;
  }
  RolledUp up = RollUpRanks(report);
  Header(&out);
  out.append("\"a\":");
  Side(report.path_a, CommonLabel(report, true), up.kernels_a, up.truncated_a, &out);
  out.append(",\"b\":");
  Side(report.path_b, CommonLabel(report, false), up.kernels_b, up.truncated_b, &out);
  out.push_back(',');
  WriteTolerance(report.ranks.empty() ? Tolerance{} : report.ranks[0].result->tolerance, &out);
  out.append(",\"verdict\":\"");
  out.append(VerdictName(up.verdict));
  out.append("\",");
  Counts(up.counts, &out);
  out.push_back(',');
  const RankDiff* fd = up.first_divergence_rank >= 0 ? &report.ranks[up.first_divergence_rank] : nullptr;
  FirstDivergence(fd, fd ? fd->rank : -1, &out);
  out.append(",\"first_nonfinite\":{\"a\":");
  if (up.first_nonfinite_a_rank >= 0) {
    const RankDiff& rd = report.ranks[up.first_nonfinite_a_rank];
    Nonfinite(rd.a, rd.result->first_nonfinite_a, rd.rank, &out);
  } else {
    out.append("null");
  }
  out.append(",\"b\":");
  if (up.first_nonfinite_b_rank >= 0) {
    const RankDiff& rd = report.ranks[up.first_nonfinite_b_rank];
    Nonfinite(rd.b, rd.result->first_nonfinite_b, rd.rank, &out);
  } else {
    out.append("null");
  }
  out.append("},\"ranks\":[");
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    if (i) out.push_back(',');
    const RankDiff& rd = report.ranks[i];
    RankSummary(rd, rd.a->path, rd.b->path, true, &out);
  }
  out.append("]}\n");
  return out;
}

}  // namespace numtrace::analyzer
