// File: analyzer/report/html_provenance.h
//
// The HTML report's provenance data: a module column for the table (each
// row's scope and its full "scope (op, phase)" label, as ids into two string
// tables), the provenance of the kernels shown in cards, and the per-module
// roll-up (pairs, diverged, first divergence row per module). The page
// (html_template.html) shows the module column, filters by module and lists
// the roll-up.
//
// Example:
//   HtmlModuleColumn mods;
//   mods.Row(ta, &ka, tb, &kb);   // once per table row, in row order
//   mods.Write(w);                // "scopes", "wheres", "rows_sm", "rows_pw"
#ifndef NUMTRACE_ANALYZER_REPORT_HTML_PROVENANCE_H_
#define NUMTRACE_ANALYZER_REPORT_HTML_PROVENANCE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/judge/diff_result.h"
#include "analyzer/model/trace.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {

class HtmlModuleColumn {
 public:
  // Either kernel may be null (a row of one side only). A's provenance wins.
  void Row(const Trace& a, const Kernel* ka, const Trace& b, const Kernel* kb);
  // Writes nothing when no row had provenance.
  void Write(JsonWriter& w);

 private:
  static int64_t Id(std::string_view s, absl::flat_hash_map<std::string, int64_t>* ids,
                    std::vector<std::string_view>* names);
  absl::flat_hash_map<std::string, int64_t> scope_ids_, where_ids_;
  // The "where" id by the views Row labels (they point into the traces'
  // string pools, so equal views are equal text): the label of a (scope, op,
  // phase) is built once, not once per row. Presence bits, then phase.
  using LabelKey = std::tuple<const char*, size_t, const char*, size_t, int, int>;
  absl::flat_hash_map<LabelKey, int64_t> where_of_;
  std::vector<std::string_view> scopes_, wheres_;  // views into the maps' keys
  std::string sm_, pw_;                            // comma-separated ids, -1 none
  bool any_ = false;
};

// "scope", "op", "phase", "src" members of a kernel shown in a card, where known.
void KernelProvenanceMembers(const Trace& t, const Kernel& k, JsonWriter& w);

// "modules": [{"scope","pairs","diverged","first": row or -1}], from
// RollUpModules; `pair_row` maps pair index to table row. Absent when empty.
void HtmlModules(const Trace& a, const Trace& b, const DiffResult& result,
                 const std::vector<int64_t>& pair_row, JsonWriter& w);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_PROVENANCE_H_
