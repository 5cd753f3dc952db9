// File: common/settings/settings.h
//
// THE table of numtrace's capture settings: one entry per NUMTRACE_*
// variable, holding everything said about it anywhere - the variable, the
// `numtrace run`/`twice` option that sets it, the parser that reads it into
// the shim's Config, the accepted forms (used in the one-line error and the
// docs), the default and the help text. Three users read it:
//   * the shim's ParseConfig (config.h) parses the environment entry by entry;
//   * launcher/run_options registers one option per entry with an option, and
//     `numtrace run`/`twice` validate the environment they build with the
//     same ParseConfig before starting the job;
//   * test/common/settings/settings_test.cc checks docs/configuration.md's
//     reference table against RenderSettingsTable(), so the two cannot drift.
// Adding a setting is one entry in settings.cc (and its Config field);
// the docs test then prints the row to paste into docs/configuration.md.
//
// Standard C++ only: linked into libnumtrace.so and into the numtrace command.
//
// Example:
//   const Setting* s = FindSetting("NUMTRACE_STEPS");
//   s->option;                  // "--steps"
//   Config c;
//   s->parse("1,3-4", &c);      // true; c.steps.Contains(3)
#ifndef NUMTRACE_COMMON_SETTINGS_SETTINGS_H_
#define NUMTRACE_COMMON_SETTINGS_SETTINGS_H_

#include <span>
#include <string>
#include <string_view>

namespace numtrace::settings {

struct Config;

enum class SettingKind : unsigned char {
  kValue,   // text parsed by `parse`
  kPath,    // a path: `numtrace run` makes it absolute against its own cwd
  kSwitch,  // on/off, read by ParseBool (kBoolWords)
};

struct Setting {
  std::string_view variable = {};    // "NUMTRACE_STEPS"
  // The `numtrace run` / `numtrace twice` option: "--steps", or CLI11's
  // "-o,--output" form; empty when the setting is environment-only.
  std::string_view option = {};
  std::string_view value_name = {};  // "LIST": the option's value in --help
  // For an option whose value may be left out (`--watch` alone): the value
  // it then means. Empty: the option needs a value.
  std::string_view implicit_value = {};
  SettingKind kind = SettingKind::kValue;
  bool run_required = false;    // `numtrace run` refuses to start without it (-o)
  // It changes which launches are captured or which buffers are listed, so
  // the seq numbers and sizes of a re-capture match only when it is repeated:
  // the trace header records its value (capture.settings) and the diff's
  // printed re-capture commands repeat it.
  bool recapture = false;
  // It keeps some launches of a step out of the capture (the launch window,
  // the kernel filters). Watch mode digests every launch whatever it says,
  // so the full capture of a step the digests named leaves it out: kept, it
  // could leave out the very launch the digests differ at.
  bool narrows_step = false;
  std::string_view default_text = {};  // docs' default column ("" renders as "empty")
  std::string_view accepted = {};    // the accepted forms: error line and docs
  std::string_view help = {};        // one line: --help and the docs' meaning column
  // Reads `value` (never null; blanks around are the parser's business) into
  // `*config`. Entries are parsed in table order, so a parser may look at
  // what earlier entries set (NUMTRACE_STEPS' default follows
  // NUMTRACE_STEP_MODE). false: not valid.
  bool (*parse)(std::string_view value, Config* config) = nullptr;
};

// In parse order. NUMTRACE_ENABLE is first: off means nothing else is read.
std::span<const Setting> Settings();
// nullptr when `variable` is not a setting.
const Setting* FindSetting(std::string_view variable);

// The reference table of docs/configuration.md, as markdown: a header row,
// a separator and one row per setting.
std::string RenderSettingsTable();

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_SETTINGS_H_
