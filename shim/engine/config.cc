#include "shim/engine/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>

namespace numtrace::shim {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  s = Trim(s);
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// "NUMTRACE_X='v' is not valid: accepted ..." - one line, names all three
// (log::Write adds the "numtrace: " prefix); the value is quoted with its
// control bytes escaped, so a value holding a newline is still one line.
std::string BadValue(std::string_view var, std::string_view value, std::string_view accepted) {
  std::string s(var);
  s.append("='").append(OneLineValue(value)).append("' is not valid; accepted: ");
  s.append(accepted).append(" (numtrace stays off for this process)");
  return s;
}

std::optional<NamePattern> CompileRegex(std::string_view text) {
  std::string why;
  return NamePattern::Compile(text, &why);
}

std::optional<std::vector<NameFilter>> ParseFilters(std::string_view text) {
  std::vector<NameFilter> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = Trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) continue;
    NameFilter f;
    f.text = std::string(item);
    if (item.starts_with("regex:")) {
      auto re = CompileRegex(item.substr(6));
      if (!re || item.size() == 6) return std::nullopt;
      f.is_regex = true;
      f.regex = std::move(*re);
    }
    out.push_back(std::move(f));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::string OneLineValue(std::string_view value, size_t max) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char ch : value) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out.append("\\x").append(1, kHex[c >> 4]).append(1, kHex[c & 15]);
    else out += ch;
  }
  return out;
}

std::optional<bool> ParseBool(std::string_view s) {
  s = Trim(s);
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off" || lower.empty()) return false;
  return std::nullopt;
}

std::string_view StepModeName(StepMode m) {
  switch (m) {
    case StepMode::kMark: return "mark";
    case StepMode::kApi: return "api";
    case StepMode::kProfiler: return "profiler";
    case StepMode::kNvtx: return "nvtx";
    case StepMode::kKernel: return "kernel";
    case StepMode::kLaunches: return "launches";
  }
  return "?";
}

std::optional<StepSet> StepSet::Parse(std::string_view text) {
  text = Trim(text);
  if (text == "all" || text == "*") return All();
  StepSet s;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = Trim(text.substr(start, end - start));
    start = end + 1;
    size_t dash = item.find('-');
    std::optional<uint64_t> lo, hi;
    if (dash == std::string_view::npos) {
      lo = hi = ParseU64(item);
    } else {
      lo = ParseU64(item.substr(0, dash));
      hi = ParseU64(item.substr(dash + 1));
    }
    constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
    if (!lo || !hi || *lo > *hi || *hi > kMax) return std::nullopt;
    s.ranges_.emplace_back(static_cast<int64_t>(*lo), static_cast<int64_t>(*hi));
  }
  std::sort(s.ranges_.begin(), s.ranges_.end());
  return s;
}

bool StepSet::Contains(int64_t step) const {
  if (all_) return step >= 0;
  for (const auto& [lo, hi] : ranges_) {
    if (step >= lo && step <= hi) return true;
  }
  return false;
}

int64_t StepSet::Last() const {
  if (all_) return std::numeric_limits<int64_t>::max();
  int64_t last = -1;
  for (const auto& r : ranges_) last = std::max(last, r.second);
  return last;
}

std::vector<int64_t> StepSet::Listed() const {
  std::vector<int64_t> out;
  for (const auto& [lo, hi] : ranges_) {
    for (int64_t s = lo; s <= hi && out.size() < 4096; ++s) out.push_back(s);
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string StepSet::ToString() const {
  if (all_) return "all";
  std::string s;
  for (const auto& [lo, hi] : ranges_) {
    if (!s.empty()) s.push_back(',');
    s += std::to_string(lo);
    if (hi != lo) s += "-" + std::to_string(hi);
  }
  return s;
}

bool NameFilter::Matches(std::string_view name) const {
  if (!is_regex) return name.find(text) != std::string_view::npos;
  return regex.Search(name);
}

std::optional<uint64_t> ParseByteSize(std::string_view text) {
  text = Trim(text);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  auto n = ParseU64(text.substr(0, digits));
  if (!n) return std::nullopt;
  std::string unit(Trim(text.substr(digits)));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  else return std::nullopt;
  if (shift && *n > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return *n << shift;
}

std::string Config::SelectorText() const {
  std::string s = "mode=" + std::string(StepModeName(step_mode));
  if (!step_regex_text.empty()) s += ":" + step_regex_text;
  if (step_mode == StepMode::kLaunches) s += ":" + std::to_string(launches_per_step);
  s += " steps=" + steps.ToString();
  if (launch_skip) s += " launch_skip=" + std::to_string(launch_skip);
  if (launch_count) s += " launch_count=" + std::to_string(*launch_count);
  for (const auto& f : include) s += " kernel=" + f.text;
  for (const auto& f : exclude) s += " exclude=" + f.text;
  if (min_bytes) s += " min_bytes=" + std::to_string(min_bytes);
  return s;
}

std::optional<Config> ParseConfig(const GetEnvFn& getenv, std::string* error) {
  Config c;
  auto get = [&](const char* name) -> std::optional<std::string_view> {
    const char* v = getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string_view(v);
  };
  auto fail = [&](const char* var, std::string_view value, std::string_view accepted) {
    *error = BadValue(var, value, accepted);
    return std::nullopt;
  };

  // NUMTRACE_ENABLE=0 first: off means off, whatever else is set (no
  // message about other variables).
  if (auto v = get("NUMTRACE_ENABLE")) {
    auto b = ParseBool(*v);
    if (!b) return fail("NUMTRACE_ENABLE", *v, kBoolWords);
    c.enabled = *b;
    if (!c.enabled) return c;
  }
  if (auto v = get("NUMTRACE_STRICT")) {
    auto b = ParseBool(*v);
    if (!b) return fail("NUMTRACE_STRICT", *v, kBoolWords);
    c.strict = *b;
  }
  if (auto v = get("NUMTRACE_OUTPUT_DIR")) {
    if (Trim(*v).empty()) return fail("NUMTRACE_OUTPUT_DIR", *v, "a directory path");
    c.output_dir = std::string(*v);
  }
  constexpr std::string_view kModes =
      "mark, api, profiler, nvtx:REGEX, kernel:REGEX, launches:N (N >= 1)";
  bool range_mode = false;
  if (auto v = get("NUMTRACE_STEP_MODE")) {
    std::string_view m = Trim(*v);
    if (m == "mark") c.step_mode = StepMode::kMark;
    else if (m == "api") c.step_mode = StepMode::kApi;
    else if (m == "profiler") c.step_mode = StepMode::kProfiler;
    else if (m.starts_with("nvtx:") || m.starts_with("kernel:")) {
      const bool nvtx = m.starts_with("nvtx:");
      std::string_view re = m.substr(nvtx ? 5 : 7);
      auto compiled = CompileRegex(re);
      if (re.empty() || !compiled) return fail("NUMTRACE_STEP_MODE", *v, kModes);
      c.step_mode = nvtx ? StepMode::kNvtx : StepMode::kKernel;
      c.step_regex_text = std::string(re);
      c.step_regex = std::move(*compiled);
    } else if (m.starts_with("launches:")) {
      auto n = ParseU64(m.substr(9));
      if (!n || *n == 0) return fail("NUMTRACE_STEP_MODE", *v, kModes);
      c.step_mode = StepMode::kLaunches;
      c.launches_per_step = *n;
    } else {
      return fail("NUMTRACE_STEP_MODE", *v, kModes);
    }
  }
  range_mode = c.step_mode == StepMode::kApi || c.step_mode == StepMode::kProfiler ||
               c.step_mode == StepMode::kNvtx;
  // Range modes capture every range by default: the ranges are the selection.
  c.steps = range_mode ? StepSet::All() : *StepSet::Parse("2");
  if (auto v = get("NUMTRACE_STEPS")) {
    auto s = StepSet::Parse(*v);
    if (!s) return fail("NUMTRACE_STEPS", *v, "all, N, N,M, N-M or a mix like 1,3-4 (N >= 0)");
    c.steps = std::move(*s);
  }
  if (auto v = get("NUMTRACE_LAUNCH_SKIP")) {
    auto n = ParseU64(*v);
    if (!n) return fail("NUMTRACE_LAUNCH_SKIP", *v, "a count N >= 0");
    c.launch_skip = *n;
  }
  if (auto v = get("NUMTRACE_LAUNCH_COUNT")) {
    auto n = ParseU64(*v);
    if (!n || *n == 0) return fail("NUMTRACE_LAUNCH_COUNT", *v, "a count N >= 1");
    c.launch_count = *n;
  }
  constexpr std::string_view kFilter = "SUBSTRING or regex:EXPR, several separated by ';'";
  if (auto v = get("NUMTRACE_KERNEL")) {
    auto f = ParseFilters(*v);
    if (!f) return fail("NUMTRACE_KERNEL", *v, kFilter);
    c.include = std::move(*f);
  }
  if (auto v = get("NUMTRACE_KERNEL_EXCLUDE")) {
    auto f = ParseFilters(*v);
    if (!f) return fail("NUMTRACE_KERNEL_EXCLUDE", *v, kFilter);
    c.exclude = std::move(*f);
  }
  constexpr std::string_view kBytes = "a byte count like 4096, 512k, 64MiB, 1G";
  if (auto v = get("NUMTRACE_MIN_BYTES")) {
    auto n = ParseByteSize(*v);
    if (!n) return fail("NUMTRACE_MIN_BYTES", *v, kBytes);
    c.min_bytes = *n;
  }
  if (auto v = get("NUMTRACE_OUTPUTS")) {
    std::string_view m = Trim(*v);
    if (m == "changed") c.outputs = OutputsMode::kChanged;
    else if (m == "all") c.outputs = OutputsMode::kAll;
    else return fail("NUMTRACE_OUTPUTS", *v, "changed or all");
  }
  if (auto v = get("NUMTRACE_LOG_LEVEL")) {
    std::string_view m = Trim(*v);
    if (m != "off" && m != "error" && m != "warn" && m != "info" && m != "debug") {
      return fail("NUMTRACE_LOG_LEVEL", *v, "off, error, warn, info, debug");
    }
    c.log_level = std::string(m);
  }
  if (auto v = get("NUMTRACE_LABEL")) c.label = std::string(*v);
  if (auto v = get("NUMTRACE_DEVICE_MEMORY")) {
    auto n = ParseByteSize(*v);
    if (!n || *n < (1u << 20)) return fail("NUMTRACE_DEVICE_MEMORY", *v, "a size of at least 1MiB, like 64MiB or 1G");
    c.device_memory = *n;
  }
  if (auto v = get("NUMTRACE_CUPTI_LIB")) {
    if (Trim(*v).empty()) return fail("NUMTRACE_CUPTI_LIB", *v, "a path to libcupti.so");
    c.cupti_lib = std::string(*v);
  }
  if (auto v = get("NUMTRACE_QUEUE_RECORDS")) {
    auto n = ParseU64(*v);
    if (!n || *n == 0) return fail("NUMTRACE_QUEUE_RECORDS", *v, "a count N >= 1");
    c.queue_records = *n;
  }
  // Tensor dumps: which launches, where, and how many bytes at most.
  if (auto v = get("NUMTRACE_DUMP")) {
    std::string accepted;
    auto sel = ParseDumpSelection(Trim(*v), &accepted);
    if (!sel) return fail("NUMTRACE_DUMP", *v, accepted);
    c.dump = std::move(*sel);
  }
  if (auto v = get("NUMTRACE_DUMP_EXPECT")) {
    auto e = ParseDumpExpectation(Trim(*v));
    const bool one_launch =
        c.dump && ((c.dump->form == DumpSelection::Form::kSeq && c.dump->seqs.size() == 1) ||
                   c.dump->form == DumpSelection::Form::kNameCount);
    if (!e || !one_launch) {
      return fail("NUMTRACE_DUMP_EXPECT", *v,
                  "NAME@BYTES,BYTES,... with NUMTRACE_DUMP naming one launch (seq:N or NAME#K)");
    }
    c.dump_expect = std::move(*e);
  }
  if (auto v = get("NUMTRACE_DUMP_DIR")) {
    if (Trim(*v).empty()) return fail("NUMTRACE_DUMP_DIR", *v, "a directory path");
    c.dump_dir = std::string(*v);
  }
  if (auto v = get("NUMTRACE_DUMP_MAX_BYTES")) {
    auto n = ParseByteSize(*v);
    if (!n || *n == 0) return fail("NUMTRACE_DUMP_MAX_BYTES", *v, "a size of at least 1 byte, like 512MiB or 4G");
    c.dump_max_bytes = *n;
  }
  return c;
}

}  // namespace numtrace::shim
