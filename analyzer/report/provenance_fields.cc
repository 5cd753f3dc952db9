// File: analyzer/report/provenance_fields.cc
//
// See provenance_fields.h.
#include "analyzer/report/provenance_fields.h"

namespace numtrace::analyzer {

void ProvenanceFields(const PairProvenance& p, JsonWriter& w) {
  if (p.a_scope) w.Key("a_scope").String(*p.a_scope);
  if (p.b_scope) w.Key("b_scope").String(*p.b_scope);
  if (p.a_op) w.Key("a_op").String(*p.a_op);
  if (p.b_op) w.Key("b_op").String(*p.b_op);
  if (p.phase != Phase::kNone) w.Key("phase").String(PhaseName(p.phase));
  if (p.a_src) w.Key("a_src").String(*p.a_src);
  if (p.b_src) w.Key("b_src").String(*p.b_src);
}

void ModulesField(const Trace& a, const Trace& b, const DiffResult& result, JsonWriter& w) {
  const std::vector<ModuleRollup> modules = RollUpModules(a, b, result);
  if (modules.empty()) return;
  w.Key("modules").BeginArray();
  for (const ModuleRollup& m : modules) {
    w.BeginObject().Key("scope").String(m.scope).Key("pairs").Uint(m.pairs).Key("diverged").Uint(m.diverged);
    w.Key("first_divergence");
    if (m.first_divergence) {
      const KernelPair& p = result.alignment.pairs[*m.first_divergence];
      const Kernel& ka = a.kernels[p.a];
      const Kernel& kb = b.kernels[p.b];
      w.BeginObject().Key("a_seq").Uint(ka.seq).Key("b_seq").Uint(kb.seq);
      w.Key("a_name").String(a.Name(ka)).Key("b_name").String(b.Name(kb));
      ProvenanceFields(ProvenanceOf(a, &ka, b, &kb), w);
      w.EndObject();
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace numtrace::analyzer
