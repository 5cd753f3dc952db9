// File: common/settings/name_pattern.h
//
// The shim's one regular expression type, for every pattern a user gives it
// (NUMTRACE_KERNEL / _EXCLUDE "regex:", NUMTRACE_STEP_MODE "nvtx:" and
// "kernel:", NUMTRACE_DUMP "regex:"), searched anywhere in a kernel or NVTX
// range name. Names come from the job's own binaries and can be very long
// (a 50,000-character template instantiation is real): matching must neither
// recurse per character nor take more than linear time, or the user's job
// dies of the tool.
//
// Why not RE2, which the tools use: Debian's libre2.a accesses its
// thread-local with the local-exec TLS model (R_X86_64_TPOFF32 in re2.o), so
// it cannot be linked into a shared object, and libnumtrace.so may need no
// Debian shared library (scripts/gpu-bundle.sh checks). So this is
// libstdc++'s std::regex in ECMAScript syntax with the __polynomial option:
// the breadth-first (Thompson) executor, whose stack depth and memory follow
// the pattern's size, never the name's. To keep the time linear in the name
// the pattern is compiled as "[\s\S]*?(?:PATTERN)" and matched in one pass
// anchored at the first byte (std::regex_search alone retries from every
// position: quadratic, seconds for a 4,000-character name).
// Back-references are refused (they need backtracking); the pattern is
// capped at kMaxPatternBytes, and libstdc++ refuses automata over 100,000
// states (e.g. "(a{1000}){1000}"), so compiling is bounded too.
//
// Example:
//   std::string why;
//   std::optional<NamePattern> p = NamePattern::Compile("k.*gemm", &why);
//   p->Search(std::string(50000, 'k') + "gemm");  // true, in microseconds
#ifndef NUMTRACE_COMMON_SETTINGS_NAME_PATTERN_H_
#define NUMTRACE_COMMON_SETTINGS_NAME_PATTERN_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace numtrace::settings {

class NamePattern {
 public:
  static constexpr size_t kMaxPatternBytes = 1024;

  // nullopt and `*why` (one short phrase; when given) for an empty, too long
  // or invalid pattern or one with a back-reference.
  [[nodiscard]] static std::optional<NamePattern> Compile(std::string_view text, std::string* why = nullptr);

  NamePattern();  // matches nothing
  ~NamePattern();
  NamePattern(const NamePattern&);
  NamePattern& operator=(const NamePattern&);
  NamePattern(NamePattern&&) noexcept;
  NamePattern& operator=(NamePattern&&) noexcept;

  // True when the pattern matches anywhere in `name`.
  bool Search(std::string_view name) const;
  const std::string& text() const { return text_; }

 private:
  struct Impl;
  std::string text_;
  std::shared_ptr<const Impl> impl_;  // immutable once compiled: shared by copies
};

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_NAME_PATTERN_H_
