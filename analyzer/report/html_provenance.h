// File: analyzer/report/html_provenance.h
//
// The HTML report's module column: each table row's scope and its full
// "scope (op, phase)" label, as ids into two interned string tables. The
// page (html_template.html) shows the column and filters by module.
//
// Example:
//   HtmlModuleColumn mods;
//   auto [scope, where] = mods.Row(ta, &ka, tb, &kb);  // ids, -1 for none
//   mods.Write(w);                                      // "scopes", "wheres"
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
  struct Ids {
    int64_t scope = -1, where = -1;  // -1: none
  };
  // Either kernel may be null (a row of one side only). A's provenance wins.
  Ids Row(const Trace& a, const Kernel* ka, const Trace& b, const Kernel* kb);
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
  bool any_ = false;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_HTML_PROVENANCE_H_
