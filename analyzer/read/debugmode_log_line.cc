#include "analyzer/read/debugmode_log_line.h"

#include "analyzer/read/text_util.h"

namespace numtrace::analyzer {
namespace {

DebugModeStat StatOf(std::string_view key) {
  // By length first: one comparison per line instead of up to eleven.
  switch (key.size()) {
    case 3: return key == "Min" ? kStatMin : key == "Max" ? kStatMax : kStatOther;
    case 4: return key == "Mean" ? kStatMean : kStatOther;
    case 5: return key == "Shape" ? kStatShape : key == "Dtype" ? kStatDtype : key == "Phase" ? kStatPhase : kStatOther;
    case 7: return key == "L2 norm" ? kStatL2 : key == "L1 norm" ? kStatL1 : kStatOther;
    case 8: return key == "Location" ? kStatLocation : kStatOther;
    case 11: return key == "Output hash" ? kStatOutputHash : kStatOther;
    case 12: return key == "Input hashes" ? kStatInputHashes : kStatOther;
    case 15: return key == "Input producers" ? kStatInputProducers : kStatOther;
    default: return kStatOther;
  }
}

}  // namespace

DebugModeLogLine TokenizeDebugModeLine(std::string_view line) {
  DebugModeLogLine out;
  const std::string_view trimmed = Trim(line);
  if (trimmed.empty()) return out;  // kBlank
  if (IsSpace(line[0])) {
    const size_t colon = trimmed.find(':');
    if (colon == std::string_view::npos) {
      out.kind = DebugModeLogLine::kIndentedText;
      return out;
    }
    out.kind = DebugModeLogLine::kStat;
    out.key = Trim(trimmed.substr(0, colon));
    out.value = Trim(trimmed.substr(colon + 1));
    out.stat = StatOf(out.key);
    return out;
  }
  if (trimmed.front() == '[') {
    if (trimmed.back() != ']' || trimmed.size() < 3) {
      out.kind = DebugModeLogLine::kBadHeader;
      return out;
    }
    out.kind = DebugModeLogLine::kHeader;
    out.key = trimmed.substr(1, trimmed.size() - 2);
    return out;
  }
  std::string_view rest = trimmed;
  if (ConsumePrefix(&rest, "Total captured activations:")) {
    out.kind = DebugModeLogLine::kTotal;
    if (uint64_t total; ParseUint(Trim(rest), &total)) out.total = total;
  } else if (ConsumePrefix(&rest, "Excluded ops dispatched:")) {
    out.kind = DebugModeLogLine::kExcluded;
  } else if (trimmed.find_first_not_of('=') == std::string_view::npos) {
    out.kind = DebugModeLogLine::kRule;
  } else {
    out.kind = DebugModeLogLine::kText;
  }
  return out;
}

}  // namespace numtrace::analyzer
