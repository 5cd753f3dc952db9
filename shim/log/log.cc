// File: shim/log/log.cc
//
// spdlog behind the facade; see log.h.
#include "shim/log/log.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <memory>

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
  Logger().log(ToSpdlog(level), "{}", message);
}

}  // namespace numtrace::shim::log
