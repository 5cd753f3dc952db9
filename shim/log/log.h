// File: shim/log/log.h
//
// The shim's logging facade: one line per message on stderr, prefixed
// "numtrace: ", written in one call so lines from several threads never
// interleave. Built on spdlog's header-only target (stderr sink); the level
// comes from NUMTRACE_LOG_LEVEL (Config::log_level, passed in by the
// injection once the configuration is read) and defaults to warn, so a
// job sees only what it must (CUPTI held by another tool, no driver, a
// failed allocation). Messages use fmt syntax.
//
// Example:
//   log::SetLevel(Runtime::Get().config().log_level);      // "info", "debug", ...
//   log::Warn("cannot allocate {} MiB of device memory", mib);
//   if (log::Enabled(log::Level::kDebug)) log::Debug("launch {}", name);
#ifndef NUMTRACE_SHIM_LOG_LOG_H_
#define NUMTRACE_SHIM_LOG_LOG_H_

#include <fmt/format.h>

#include <string_view>
#include <utility>

namespace numtrace::shim::log {

enum class Level : int { kTrace = 0, kDebug, kInfo, kWarn, kError, kOff };

// Parses "trace", "debug", "info", "warn"/"warning", "error", "off"; false
// (and `*out` unchanged) for anything else.
bool ParseLevel(std::string_view name, Level* out);

// Sets the level by name; an unknown name keeps the current level.
void SetLevel(std::string_view name);
void SetLevel(Level level);
Level GetLevel();
bool Enabled(Level level);

// Writes "numtrace: <message>" when `level` is enabled.
void Write(Level level, std::string_view message);

template <typename... A>
void Log(Level level, fmt::format_string<A...> f, A&&... args) {
  if (Enabled(level)) Write(level, fmt::format(f, std::forward<A>(args)...));
}
template <typename... A>
void Debug(fmt::format_string<A...> f, A&&... args) { Log(Level::kDebug, f, std::forward<A>(args)...); }
template <typename... A>
void Info(fmt::format_string<A...> f, A&&... args) { Log(Level::kInfo, f, std::forward<A>(args)...); }
template <typename... A>
void Warn(fmt::format_string<A...> f, A&&... args) { Log(Level::kWarn, f, std::forward<A>(args)...); }
template <typename... A>
void Error(fmt::format_string<A...> f, A&&... args) { Log(Level::kError, f, std::forward<A>(args)...); }

}  // namespace numtrace::shim::log

#endif  // NUMTRACE_SHIM_LOG_LOG_H_
