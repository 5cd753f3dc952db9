// File: analyzer/report/html_provenance.cc
//
// See html_provenance.h.
#include "analyzer/report/html_provenance.h"

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

HtmlModuleColumn::Ids HtmlModuleColumn::Row(const Trace& a, const Kernel* ka, const Trace& b, const Kernel* kb) {
  const PairProvenance p = ProvenanceOf(a, ka, b, kb);
  std::optional<std::string_view> scope = p.a_scope ? p.a_scope : p.b_scope;
  std::optional<std::string_view> op = ka != nullptr ? p.a_op : p.b_op;
  if (!op) op = p.b_op;
  Ids ids;
  if (scope) ids.scope = Id(*scope, &scope_ids_, &scopes_);
  const LabelKey key{scope ? scope->data() : nullptr, scope ? scope->size() : 0, op ? op->data() : nullptr,
                     op ? op->size() : 0, (scope ? 1 : 0) | (op ? 2 : 0), static_cast<int>(p.phase)};
  if (auto found = where_of_.find(key); found != where_of_.end()) {
    ids.where = found->second;
  } else {
    const std::string where = ProvenanceLabel(scope, op, p.phase);
    if (!where.empty()) ids.where = Id(where, &where_ids_, &wheres_);
    where_of_.emplace(key, ids.where);
  }
  any_ = any_ || ids.scope >= 0 || ids.where >= 0;
  return ids;
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
}

}  // namespace numtrace::analyzer
