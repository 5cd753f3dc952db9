// File: analyzer/read/debugmode_log_line.h
//
// The line tokenizer of torchtitan's activation log (debugmode_reader.h has
// the whole form): what kind of line one line is, and its fields, without
// knowing which block it is in. The block parser (debugmode_reader.cc)
// decides what a line means where it stands: a "Key: value" line outside a
// block is an error there, a line of text before the first block is preamble.
//
//   "Total captured activations: 42"      kTotal      total = 42
//   "Excluded ops dispatched: ..."         kExcluded
//   "=================="                   kRule
//   "[layers.0.attention.wq/op_3_mm]"      kHeader     key = "layers.0.attention.wq/op_3_mm"
//   "[oops"                                kBadHeader
//   "  L2 norm: 1.234568e+03"              kStat       stat = kL2, key = "L2 norm", value = "1.234568e+03"
//   "  Shape torch.Size([1])"              kIndentedText (no colon)
//   "anything else"                        kText
//   "" or blanks only                      kBlank
//
// Blanks around keys and values are not part of them, a trailing '\r' (a
// log written on Windows) included.
//
// Example:
//   DebugModeLogLine l = TokenizeDebugModeLine("  Min: -6.156250e+00");
//   // l.kind == DebugModeLogLine::kStat, l.stat == kStatMin, l.value == "-6.156250e+00"
#ifndef NUMTRACE_ANALYZER_READ_DEBUGMODE_LOG_LINE_H_
#define NUMTRACE_ANALYZER_READ_DEBUGMODE_LOG_LINE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "analyzer/read/text_util.h"
#include "common/text/trim.h"

namespace numtrace::analyzer {

// The keys of a block's "Key: value" lines, as bits: a block remembers which
// keys it had (the reader's truncation check compares blocks by them).
enum DebugModeStat : uint32_t {
  kStatShape = 1, kStatDtype = 2, kStatL1 = 4, kStatL2 = 8, kStatMin = 16, kStatMax = 32, kStatMean = 64,
  kStatOutputHash = 128, kStatInputHashes = 256, kStatLocation = 512, kStatPhase = 1024, kStatOther = 2048,
  kStatInputProducers = 4096,
};

struct DebugModeLogLine {
  enum Kind {
    kBlank,
    kTotal,         // preamble "Total captured activations: N"
    kExcluded,      // preamble "Excluded ops dispatched: ..."
    kRule,          // "====": the end of the preamble
    kHeader,        // "[key]", not indented
    kBadHeader,     // starts with '[' but is not "[key]" (a key of one character at least)
    kStat,          // indented "Key: value"
    kIndentedText,  // indented, without a colon
    kText,          // any other line not indented
  };
  Kind kind = kBlank;
  DebugModeStat stat = kStatOther;  // kStat: which key (kStatOther: one this reader does not know)
  std::string_view key;             // kHeader: the block key; kStat: the key as written, trimmed
  std::string_view value;           // kStat: the value, trimmed
  std::optional<uint64_t> total;    // kTotal: the count, when it is a number
};

namespace debugmode_internal {

inline DebugModeStat StatOf(std::string_view key) {
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

}  // namespace debugmode_internal

// Views into `line`, which must outlive the result. Inline: it runs once per
// line in the reader's loop, where a call cost 3% of a log's read
// (instructions counted with callgrind on a 20k-op log).
inline DebugModeLogLine TokenizeDebugModeLine(std::string_view line) {
  using debugmode_internal::StatOf;
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
    // `trimmed` has no blanks at either end: the key none at its start, the
    // value none at its end.
    out.key = trimmed.substr(0, colon);
    while (!out.key.empty() && IsSpace(out.key.back())) out.key.remove_suffix(1);
    out.value = TrimLeft(trimmed.substr(colon + 1));
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

#endif  // NUMTRACE_ANALYZER_READ_DEBUGMODE_LOG_LINE_H_
