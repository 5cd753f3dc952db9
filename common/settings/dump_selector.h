// File: common/settings/dump_selector.h
//
// Which captured launches get their buffers dumped (NUMTRACE_DUMP; the
// dumps themselves: tensor_dumper.h, docs/format.md section 5). Three forms:
//   seq:N[,M...]  the launches the trace numbers seq N, M, ... (seq counts the
//                 captured kernel records of this run, as the trace does)
//   NAME#K        the K-th (0-based) captured launch of a kernel whose symbol,
//                 demangled name or normalised name is NAME (as in the
//                 override file, docs/diffing.md)
//   regex:RE      every captured launch whose symbol or demangled name
//                 matches RE (ECMAScript, searched); bounded by
//                 NUMTRACE_DUMP_MAX_BYTES like every dump
// NUMTRACE_DUMP_EXPECT=NAME@B1,B2,... (optional, one seq or NAME#K only)
// says what the trace that asked for the dump recorded at that launch: its
// `name` and its buffers' sizes in order (NAME@ alone: the name only, as a
// diff summary knows it). The dumper checks the launch it
// dumps against it and writes a note when they differ.
//
// Example:
//   std::string why;
//   auto sel = ParseDumpSelection("seq:3990,3991", &why);  // sel->seqs == {3990, 3991}
//   DumpSelector s(*sel);
//   s.Select(3990, kernel);   // true (kernel: its KernelNames)
#ifndef NUMTRACE_COMMON_SETTINGS_DUMP_SELECTOR_H_
#define NUMTRACE_COMMON_SETTINGS_DUMP_SELECTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/settings/name_pattern.h"

namespace numtrace::settings {

// What the selector reads of a launch's kernel: its names. The shim's kernel
// cache (shim/engine/kernel_cache.h) keeps one per kernel function, at an
// address that stays valid and holds the same names while the selector
// lives: the selector decides once per kernel and keys that decision by the
// address.
struct KernelNames {
  std::string symbol;     // as launched (mangled)
  std::string demangled;  // common/names/demangle.h
};

struct DumpSelection {
  enum class Form : uint8_t { kSeq, kNameCount, kRegex };
  Form form = Form::kSeq;
  std::string text;            // as given, for messages
  std::vector<uint64_t> seqs;  // kSeq, sorted, unique
  std::string name;            // kNameCount
  uint64_t occurrence = 0;     // kNameCount: K
  NamePattern regex;           // kRegex (name_pattern.h)
};

struct DumpExpectation {
  std::string name;
  std::vector<uint64_t> bytes;  // buffer sizes, in the trace record's order; empty: not checked
};

// nullopt and `*why` (the accepted forms) on a bad value.
[[nodiscard]] std::optional<DumpSelection> ParseDumpSelection(std::string_view text,
                                                              std::string* why);
[[nodiscard]] std::optional<DumpExpectation> ParseDumpExpectation(std::string_view text);

// Decides per captured launch, in seq order. Not thread-safe: the engine
// calls it under the lock that numbers its launches.
class DumpSelector {
 public:
  explicit DumpSelector(const DumpSelection& selection) : sel_(selection) {}
  bool Select(uint64_t seq, const KernelNames& kernel);
  // At the end of the run, after `captured` launches were offered: what the
  // selection named that never came (`seq:99` past the last seq, `NAME#5`
  // with fewer launches of NAME, a regex that matched nothing), as one
  // sentence; empty when every named launch was selected.
  std::string Unreached(uint64_t captured) const;

 private:
  bool NameMatches(const KernelNames& kernel);
  const DumpSelection& sel_;
  uint64_t seen_ = 0;  // kNameCount: matching launches so far
  std::vector<uint64_t> selected_;  // seqs selected so far (kSeq: at most the list's size)
  bool any_selected_ = false;
  std::unordered_map<const KernelNames*, bool> matches_;  // per kernel, decided once
};

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_DUMP_SELECTOR_H_
