#include "analyzer/report/environment_report.h"

namespace numtrace::analyzer {

std::string_view EffectOf(const EnvDifference& e) { return e.info != nullptr ? e.info->effect : std::string_view(); }

void WriteEnvironmentJson(const EnvironmentDiff& d, JsonWriter& w) {
  w.Key("environment").BeginObject().Key("differs").BeginArray();
  for (const EnvDifference& e : d.differs) {
    w.BeginObject().Key("key").String(e.key).Key("a").String(e.a).Key("b").String(e.b);
    w.Key("effect").String(EffectOf(e)).Key("relevant").Bool(e.relevant()).EndObject();
  }
  w.EndArray().Key("only_a").BeginArray();
  for (const std::string& k : d.only_a) w.String(k);
  w.EndArray().Key("only_b").BeginArray();
  for (const std::string& k : d.only_b) w.String(k);
  w.EndArray().Key("same").Uint(d.same).EndObject();
}

std::string VerdictEnvironmentKeys(const EnvironmentDiff& d, size_t max) {
  std::string out;
  size_t named = 0, more = 0;
  auto name = [&](std::string_view key) {
    if (named == max) {
      ++more;
      return;
    }
    if (named++ > 0) out += ", ";
    out += key;
  };
  for (const EnvDifference& e : d.differs) {
    if (e.relevant()) name(e.key);
  }
  // A variable set on one side only: its absence is itself the setting
  // (unset CUBLAS_WORKSPACE_CONFIG), unlike a key the other side could not know.
  if (d.a_recorded && d.b_recorded) {
    for (const auto* keys : {&d.only_a, &d.only_b}) {
      for (const std::string& k : *keys) {
        const EnvironmentKey* info = FindEnvironmentKey(k);
        if (info != nullptr && info->relevant && k.rfind(kEnvVariablePrefix, 0) == 0) name(k);
      }
    }
  }
  if (more > 0) out += " and " + std::to_string(more) + " more";
  return out;
}

std::vector<const EnvDifference*> AffectingFirstDivergence(const RankDiff& rd) {
  const DiffResult& res = *rd.result;
  if (!res.environment || !res.first_divergence) return {};
  const Kernel& k = rd.a->kernels[res.alignment.pairs[*res.first_divergence].a];
  const std::string names = std::string(rd.a->Name(k)) + " " + std::string(rd.a->Demangled(k));
  return DifferencesAffecting(*res.environment, names, rd.a->Op(k).value_or(""));
}

const Trace* SideWithoutEnvironment(const DiffReport& report) {
  for (const RankDiff& rd : report.ranks) {
    for (const Trace* t : {rd.a, rd.b}) {
      if (!t->records_environment) return t;
    }
  }
  return nullptr;
}

std::string NoEnvironmentNote(const Trace& t) {
  return "not compared: a " + std::string(t.kind) + " records no environment";
}

}  // namespace numtrace::analyzer
