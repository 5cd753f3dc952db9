#include "common/format/diff_summary.h"

#include <new>
#include <span>

#include "common/format/enum_list.h"
#include "common/io/bounded_file.h"
#include "common/status/status_macros.h"
#include "simdjson.h"

namespace numtrace {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

std::string Str(const object& o, const char* key) {
  std::string_view v;
  return o[key].get_string().get(v) ? std::string() : std::string(v);
}
uint64_t U64(const object& o, const char* key) {
  uint64_t v = 0;
  return o[key].get_uint64().get(v) ? 0 : v;
}
double F64(const object& o, const char* key) {
  double v = 0;
  return o[key].get_double().get(v) ? 0 : v;
}

// The enumerator `key` spells in `o`, from its list `names`; an error naming
// the word and the list when it is absent or not in the list.
template <typename E>
absl::StatusOr<E> Word(const object& o, const char* key, std::span<const std::string_view> names,
                       const std::string& path) {
  const std::string word = Str(o, key);
  if (std::optional<E> e = EnumFromName<E>(names, word)) return *e;
  std::string known;
  for (std::string_view n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  return absl::InvalidArgumentError(path + ": " + key + " \"" + word.substr(0, 40) + "\" is not one of " + known);
}

absl::StatusOr<OriginView> ReadOrigin(const object& o, int64_t rank, const std::string& path) {
  OriginView v;
  v.rank = rank;
  v.a_seq = U64(o, "a_seq");
  v.a_name = Str(o, "a_name");
  v.score = F64(o, "score");
  NT_ASSIGN_OR_RETURN(v.status, Word<Verdict>(o, "status", kVerdictNames, path));
  v.descendants = U64(o, "descendants");
  return v;
}

// One rank's origins (or the whole file's, for a file pair).
absl::Status ReadOrigins(const object& s, int64_t rank, const std::string& path, DiffSummaryView* view) {
  object origins;
  if (!s["origins"].get_object().get(origins)) {
    view->has_origins = true;
    view->origin_count += U64(origins, "count");
    simdjson::dom::array top;
    if (!origins["top"].get_array().get(top)) {
      for (element e : top) {
        object o;
        if (e.get_object().get(o)) continue;
        NT_ASSIGN_OR_RETURN(OriginView v, ReadOrigin(o, rank, path));
        view->origins.push_back(std::move(v));
      }
    }
  }
  return absl::OkStatus();
}

std::optional<int64_t> OptI64(const object& o, const char* key) {
  int64_t v = 0;
  if (o[key].get_int64().get(v)) return std::nullopt;
  return v;
}

absl::Status ReadSteps(const object& root, const std::string& path, DiffSummaryView* view) {
  object s;
  if (root["steps"].get_object().get(s)) return absl::OkStatus();
  StepsView v;
  v.compared = U64(s, "compared");
  v.first_differing = OptI64(s, "first_differing");
  if (v.first_differing) {
    NT_ASSIGN_OR_RETURN(v.first_kind, Word<StepDifference>(s, "first_kind", kStepDifferenceNames, path));
  }
  object k;
  if (!s["first_kernel"].get_object().get(k)) {
    v.first_index = U64(k, "index");
    v.a_name = Str(k, "a_name");
    v.b_name = Str(k, "b_name");
  }
  object nf;
  if (!s["first_nonfinite"].get_object().get(nf)) {
    object side;
    if (!nf["a"].get_object().get(side)) v.nonfinite_a = OptI64(side, "step");
    if (!nf["b"].get_object().get(side)) v.nonfinite_b = OptI64(side, "step");
  }
  simdjson::dom::array notes;
  if (!s["notes"].get_array().get(notes)) {
    for (element e : notes) {
      std::string_view n;
      if (!e.get_string().get(n)) v.notes.emplace_back(n);
    }
  }
  view->steps = std::move(v);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DiffSummaryView> ParseDiffSummary(const std::string& json,
                                                 const std::string& path) {
  simdjson::dom::parser parser;
  object root;
  if (parser.parse(json).get_object().get(root)) {
    return absl::InvalidArgumentError(path + ": not a JSON object");
  }
  if (Str(root, "format") != kDiffSummaryFormat) {
    return absl::InvalidArgumentError(path + ": not a numtrace-diff summary (format field)");
  }
  DiffSummaryView view;
  NT_ASSIGN_OR_RETURN(view.verdict, Word<Verdict>(root, "verdict", kVerdictNames, path));
  simdjson::dom::array ranks;
  if (!root["ranks"].get_array().get(ranks)) {
    for (element e : ranks) {
      object r;
      if (e.get_object().get(r)) continue;
      int64_t rank = 0;
      if (r["rank"].get_int64().get(rank)) rank = 0;
      NT_RETURN_IF_ERROR(ReadOrigins(r, rank, path, &view));
    }
  }
  // A file pair, or a directory summary that rolls origins up only at the top.
  if (!view.has_origins) {
    NT_RETURN_IF_ERROR(ReadOrigins(root, -1, path, &view));
  }
  // For directories the top level names the rank whose divergence comes first.
  object first;
  if (!root["first_divergence"].get_object().get(first)) {
    FirstDivergenceView f;
    int64_t rank = -1;
    if (first["rank"].get_int64().get(rank)) rank = -1;
    f.rank = rank;
    f.a_seq = U64(first, "a_seq");
    f.a_name = Str(first, "a_name");
    f.b_seq = U64(first, "b_seq");
    f.b_name = Str(first, "b_name");
    NT_ASSIGN_OR_RETURN(f.kind, Word<PairStatus>(first, "kind", kPairStatusNames, path));
    if (first["cause"].error() != simdjson::NO_SUCH_FIELD) {
      NT_ASSIGN_OR_RETURN(f.cause, Word<Cause>(first, "cause", kCauseNames, path));
    }
    view.first_divergence = f;
  }
  NT_RETURN_IF_ERROR(ReadSteps(root, path, &view));
  return view;
}

absl::StatusOr<DiffSummaryView> ReadDiffSummary(const std::string& path) {
  NT_ASSIGN_OR_RETURN(const std::string text, ReadBoundedFile(path, "the diff summary", kMaxDiffSummaryBytes));
  try {
    return ParseDiffSummary(text, path);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(path + ": out of memory parsing the diff summary (" +
                                        ByteCount(text.size()) + ")");
  }
}

}  // namespace numtrace
