// File: analyzer/report/provenance_fields.h
//
// The summary's provenance fields (docs/format.md section 2: a_scope,
// b_scope, a_op, b_op, phase, a_src, b_src) and its per-module roll-up (`modules`),
// written the same way wherever a kernel or a pair is reported: first
// divergence, first NaN/Inf, origins and roots.
//
// Example:
//   w.BeginObject(); ... ProvenanceFields(ProvenanceOf(a, &ka, b, &kb), w); w.EndObject();
#ifndef NUMTRACE_ANALYZER_REPORT_PROVENANCE_FIELDS_H_
#define NUMTRACE_ANALYZER_REPORT_PROVENANCE_FIELDS_H_

#include "analyzer/judge/diff_result.h"
#include "analyzer/judge/provenance.h"
#include "analyzer/model/trace.h"
#include "common/format/json_writer.h"

namespace numtrace::analyzer {

// Members for what is known; nothing when nothing is.
void ProvenanceFields(const PairProvenance& p, JsonWriter& w);

// "modules": [{"scope":..,"pairs":N,"diverged":D,"first_divergence":{"a_seq":..,"b_seq":..,
// "a_name":..,"a_op":..,"phase":..}|null}], absent when no kernel has a scope.
void ModulesField(const Trace& a, const Trace& b, const DiffResult& result, JsonWriter& w);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_REPORT_PROVENANCE_FIELDS_H_
