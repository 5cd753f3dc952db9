// File: analyzer/report/html_provenance.cc
//
// See html_provenance.h.
#include "analyzer/report/html_provenance.h"

#include <charconv>

#include "absl/strings/string_view.h"

#include "analyzer/judge/provenance.h"

namespace numtrace::analyzer {

int64_t HtmlModuleColumn::Id(std::string_view s, absl::flat_hash_map<std::string, int64_t>* ids,
                             std::vector<std::string_view>* names) {
  if (auto found = ids->find(absl::string_view(s.data(), s.size())); found != ids->end()) {
    return found->second;  // no key copy per row
  }
  auto [it, added] = ids->try_emplace(std::string(s), static_cast<int64_t>(names->size()));
  // flat_hash_map moves keys on rehash: store the views only after all
  // rows are in (Write re-reads them), so here keep just the count right.
  if (added) names->emplace_back();
  return it->second;
}

void HtmlModuleColumn::Row(const Trace& a, const Kernel* ka, const Trace& b, const Kernel* kb) {
  const PairProvenance p = ProvenanceOf(a, ka, b, kb);
  std::optional<std::string_view> scope = p.a_scope ? p.a_scope : p.b_scope;
  std::optional<std::string_view> op = ka != nullptr ? p.a_op : p.b_op;
  if (!op) op = p.b_op;
  int64_t sm = -1, pw = -1;
  if (scope) sm = Id(*scope, &scope_ids_, &scopes_);
  const LabelKey key{scope ? scope->data() : nullptr, scope ? scope->size() : 0, op ? op->data() : nullptr,
                     op ? op->size() : 0, (scope ? 1 : 0) | (op ? 2 : 0), static_cast<int>(p.phase)};
  if (auto found = where_of_.find(key); found != where_of_.end()) {
    pw = found->second;
  } else {
    const std::string where = ProvenanceLabel(scope, op, p.phase);
    if (!where.empty()) pw = Id(where, &where_ids_, &wheres_);
    where_of_.emplace(key, pw);
  }
  any_ = any_ || sm >= 0 || pw >= 0;
  char buf[24];
  if (!sm_.empty()) sm_.push_back(',');
  sm_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), sm).ptr - buf));
  if (!pw_.empty()) pw_.push_back(',');
  pw_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), pw).ptr - buf));
}

void HtmlModuleColumn::Write(JsonWriter& w) {
  if (!any_) return;
  for (auto* table : {&scope_ids_, &where_ids_}) {
    std::vector<std::string_view>& names = table == &scope_ids_ ? scopes_ : wheres_;
    for (const auto& [text, id] : *table) names[id] = text;
  }
  w.Key("scopes").BeginArray();
  for (std::string_view s : scopes_) w.String(s);
  w.EndArray().Key("wheres").BeginArray();
  for (std::string_view s : wheres_) w.String(s);
  w.EndArray();
  w.Key("rows_sm").BeginArray().RawMembers(sm_).EndArray();
  w.Key("rows_pw").BeginArray().RawMembers(pw_).EndArray();
  sm_.clear();
  sm_.shrink_to_fit();
  pw_.clear();
  pw_.shrink_to_fit();
}

void KernelProvenanceMembers(const Trace& t, const Kernel& k, JsonWriter& w) {
  if (auto s = t.Scope(k)) w.Key("scope").String(*s);
  if (auto o = t.Op(k)) w.Key("op").String(*o);
  if (t.PhaseOf(k) != Phase::kNone) w.Key("phase").String(PhaseName(t.PhaseOf(k)));
  if (auto s = t.Src(k)) w.Key("src").String(*s);
}

void HtmlModules(const Trace& a, const Trace& b, const DiffResult& result,
                 const std::vector<int64_t>& pair_row, JsonWriter& w) {
  const std::vector<ModuleRollup> modules = RollUpModules(a, b, result);
  if (modules.empty()) return;
  w.Key("modules").BeginArray();
  for (const ModuleRollup& m : modules) {
    w.BeginObject().Key("scope").String(m.scope).Key("pairs").Uint(m.pairs).Key("diverged").Uint(m.diverged);
    w.Key("first").Int(m.first_divergence ? pair_row[*m.first_divergence] : -1).EndObject();
  }
  w.EndArray();
}

}  // namespace numtrace::analyzer
