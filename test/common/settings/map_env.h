// File: test/common/settings/map_env.h
//
// A getenv over a map, so a test hands ParseConfig exactly the environment
// it means (the process's own environment stays out of it), and the Config
// such an environment parses to. Test code of the settings and of their
// users (the shim's engine tests use it too).
//
// Example:
//   Config c = ConfigFrom({{"NUMTRACE_STEPS", "1,3-4"}});
//   ParseConfig(MapEnv({{"NUMTRACE_STEPS", "two"}}), &error);  // nullopt
#ifndef NUMTRACE_TEST_COMMON_SETTINGS_MAP_ENV_H_
#define NUMTRACE_TEST_COMMON_SETTINGS_MAP_ENV_H_

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/settings/config.h"

namespace numtrace::settings::testing {

inline GetEnvFn MapEnv(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

// Throws (failing the test with ParseConfig's line) when the map is refused.
inline Config ConfigFrom(std::map<std::string, std::string> vars) {
  std::string error;
  auto c = ParseConfig(MapEnv(std::move(vars)), &error);
  if (!c) throw std::runtime_error(error);
  return std::move(*c);
}

}  // namespace numtrace::settings::testing

#endif  // NUMTRACE_TEST_COMMON_SETTINGS_MAP_ENV_H_
