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

// Views into `line`, which must outlive the result.
DebugModeLogLine TokenizeDebugModeLine(std::string_view line);

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_READ_DEBUGMODE_LOG_LINE_H_
