#include "common/settings/config.h"

#include <utility>

#include "common/settings/settings.h"
#include "common/text/one_line.h"

namespace numtrace::settings {

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

}  // namespace numtrace::settings
