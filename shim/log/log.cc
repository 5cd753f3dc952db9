// File: shim/log/log.cc
//
// spdlog behind the facade; see log.h.
#include "shim/log/log.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <memory>
#include <string>

namespace numtrace::shim::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kWarn)};

// Leaked on purpose and kept out of spdlog's registry: CUDA callbacks may
// log during exit, after static destructors ran.
spdlog::logger& Logger() {
  static spdlog::logger* logger = [] {
    auto* l = new spdlog::logger("numtrace", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("numtrace: %v");
    l->set_level(spdlog::level::trace);  // the facade filters
    l->flush_on(spdlog::level::trace);   // stderr: every line at once
    return l;
  }();
  return *logger;
}

spdlog::level::level_enum ToSpdlog(Level level) {
  switch (level) {
    case Level::kTrace: return spdlog::level::trace;
    case Level::kDebug: return spdlog::level::debug;
    case Level::kInfo: return spdlog::level::info;
    case Level::kWarn: return spdlog::level::warn;
    case Level::kError: return spdlog::level::err;
    case Level::kOff: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

}  // namespace

bool ParseLevel(std::string_view name, Level* out) {
  struct Named {
    std::string_view name;
    Level level;
  };
  static constexpr Named kNames[] = {
      {"trace", Level::kTrace}, {"debug", Level::kDebug}, {"info", Level::kInfo},
      {"warn", Level::kWarn},   {"warning", Level::kWarn}, {"error", Level::kError},
      {"off", Level::kOff},
  };
  for (const Named& n : kNames) {
    if (n.name == name) {
      *out = n.level;
      return true;
    }
  }
  return false;
}

void SetLevel(std::string_view name) {
  Level level;
  if (ParseLevel(name, &level)) SetLevel(level);
}

void SetLevel(Level level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }

Level GetLevel() { return static_cast<Level>(g_level.load(std::memory_order_relaxed)); }

bool Enabled(Level level) {
  return level != Level::kOff &&
         static_cast<int>(level) >= g_level.load(std::memory_order_relaxed);
}

void Write(Level level, std::string_view message) {
  if (!Enabled(level)) return;
  // One line per message, whatever it quotes (a value with a newline, a
  // kernel name with an escape sequence): control bytes are escaped.
  bool clean = true;
  for (char c : message) clean &= static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  if (clean) {
    Logger().log(ToSpdlog(level), "{}", message);
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line;
  for (char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') line += "\\n";
    else if (c < 0x20 || c == 0x7f) line.append("\\x").append(1, kHex[c >> 4]).append(1, kHex[c & 15]);
    else line += ch;
  }
  Logger().log(ToSpdlog(level), "{}", line);
}

}  // namespace numtrace::shim::log
