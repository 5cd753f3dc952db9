#include "analyzer/judge/environment_diff.h"

#include <algorithm>
#include <tuple>

#include "analyzer/model/trace.h"

namespace numtrace::analyzer {
namespace {

// Relevant first, then the table's order, then the key itself.
auto Rank(std::string_view key) {
  const EnvironmentKey* k = FindEnvironmentKey(key);
  return std::make_tuple(k != nullptr && k->relevant ? 0 : 1, EnvironmentKeyOrder(key), key);
}

void SortKeys(std::vector<std::string>* keys) {
  std::sort(keys->begin(), keys->end(), [](const std::string& x, const std::string& y) { return Rank(x) < Rank(y); });
}

}  // namespace

std::optional<EnvironmentDiff> CompareEnvironments(const Trace& a, const Trace& b) {
  const EnvironmentValues& ea = a.header.environment;
  const EnvironmentValues& eb = b.header.environment;
  if (ea.empty() && eb.empty()) return std::nullopt;
  EnvironmentDiff d;
  d.a_recorded = !ea.empty();
  d.b_recorded = !eb.empty();
  for (const auto& [key, va] : ea) {
    const std::string* vb = FindEnvironmentValue(eb, key);
    if (vb == nullptr) {
      d.only_a.push_back(key);
    } else if (*vb == va) {
      ++d.same;
    } else {
      d.differs.push_back({key, va, *vb, FindEnvironmentKey(key)});
    }
  }
  for (const auto& [key, vb] : eb) {
    if (FindEnvironmentValue(ea, key) == nullptr) d.only_b.push_back(key);
  }
  std::sort(d.differs.begin(), d.differs.end(),
            [](const EnvDifference& x, const EnvDifference& y) { return Rank(x.key) < Rank(y.key); });
  SortKeys(&d.only_a);
  SortKeys(&d.only_b);
  return d;
}

std::vector<const EnvDifference*> DifferencesAffecting(const EnvironmentDiff& d, std::string_view name,
                                                       std::string_view op) {
  std::vector<const EnvDifference*> out;
  for (const EnvDifference& e : d.differs) {
    if (!e.relevant()) continue;
    // A setting that touches every launch (another GPU, another torch)
    // says nothing about this one in particular.
    if (e.info->affects == EnvAffects::kAll) continue;
    if (EnvironmentAffectsLaunch(e.info->affects, name, op)) out.push_back(&e);
  }
  return out;
}

}  // namespace numtrace::analyzer
