#include "analyzer/align/alignment.h"

namespace numtrace::analyzer {

std::string_view MatchMethodName(MatchMethod m) {
  switch (m) {
    case MatchMethod::kOverride: return "override";
    case MatchMethod::kExact: return "exact";
    case MatchMethod::kFuzzy: return "fuzzy";
    case MatchMethod::kValue: return "value";
  }
  return "unknown";
}

}  // namespace numtrace::analyzer
