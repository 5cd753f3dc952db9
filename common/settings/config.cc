#include "common/settings/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>
#include <cstdint>
#include <limits>

#include "common/settings/settings.h"
#include "common/text/one_line.h"

namespace numtrace::shim {

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseCount(std::string_view s) {
  s = TrimBlanks(s);
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<NamePattern> CompileRegex(std::string_view text) {
  std::string why;
  return NamePattern::Compile(text, &why);
}

std::optional<std::vector<NameFilter>> ParseNameFilters(std::string_view text) {
  std::vector<NameFilter> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = TrimBlanks(text.substr(start, end - start));
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

std::optional<bool> ParseBool(std::string_view s) {
  s = TrimBlanks(s);
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off" || lower.empty()) return false;
  return std::nullopt;
}

TorchAllocConf FindTorchAllocConf(const GetEnvFn& getenv) {
  for (const char* name : {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}) {
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') return {name, v};
  }
  return {};
}

std::optional<AllocatorMode> ParseAllocatorMode(std::string_view text) {
  return EnumFromName<AllocatorMode>(kAllocatorModeNames, TrimBlanks(text));
}

std::optional<StepSet> StepSet::Parse(std::string_view text) {
  text = TrimBlanks(text);
  if (text == "all" || text == "*") return All();
  StepSet s;
  if (text == "none") return s;  // watch mode: digests only, no step in full
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = TrimBlanks(text.substr(start, end - start));
    start = end + 1;
    size_t dash = item.find('-');
    std::optional<uint64_t> lo, hi;
    if (dash == std::string_view::npos) {
      lo = hi = ParseCount(item);
    } else {
      lo = ParseCount(item.substr(0, dash));
      hi = ParseCount(item.substr(dash + 1));
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
  if (ranges_.empty()) return "none";
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
  text = TrimBlanks(text);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  auto n = ParseCount(text.substr(0, digits));
  if (!n) return std::nullopt;
  std::string unit(TrimBlanks(text.substr(digits)));
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

std::string SettingError::LineFor(std::string_view name) const {
  std::string s(name);
  s.append(" '").append(OneLine(value, 200)).append("' is not valid; accepted: ").append(accepted);
  return s;
}

// "NUMTRACE_X='v' is not valid; accepted ..." - one line, names all three
// (log::Write adds the "numtrace: " prefix); the value is quoted with its
// control bytes escaped, so a value holding a newline is still one line.
std::string SettingError::Line() const {
  std::string s(setting != nullptr ? setting->variable : "NUMTRACE_?");
  s.append("='").append(OneLine(value, 200)).append("' is not valid; accepted: ").append(accepted);
  s.append(" (numtrace stays off for this process)");
  return s;
}

std::optional<Config> ParseConfig(const GetEnvFn& getenv, std::string* error, SettingError* detail) {
  Config c;
  for (const Setting& s : Settings()) {
    const char* v = getenv(std::string(s.variable).c_str());
    if (v == nullptr) continue;
    if (!s.parse(v, &c)) {
      SettingError e{&s, v, std::string(s.accepted)};
      *error = e.Line();
      if (detail != nullptr) *detail = std::move(e);
      return std::nullopt;
    }
    // NUMTRACE_ENABLE=0 comes first: off means off, whatever else is set
    // (no message about other variables).
    if (!c.enabled) return c;
  }
  // Watch mode digests every step; a step in full only when asked for.
  if (c.watch != WatchMode::kOff && getenv("NUMTRACE_STEPS") == nullptr) c.steps = StepSet();
  return c;
}

}  // namespace numtrace::shim
