// File: launcher/environment.h
//
// A process environment as a value: read from the running process, changed
// by the launcher's rules, handed to a child. Tests build one by hand.
//
// Example:
//   Environment env = EnvironmentFromProcess();
//   env.Set("NUMTRACE_STEPS", "2");
//   env.Prepend("PYTHONPATH", "/opt/numtrace/share/numtrace/hooks");  // "a:old"
#ifndef NUMTRACE_LAUNCHER_ENVIRONMENT_H_
#define NUMTRACE_LAUNCHER_ENVIRONMENT_H_

#include <map>
#include <string>
#include <vector>

namespace numtrace::launcher {

class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}

  // nullptr when unset.
  const std::string* Find(const std::string& name) const;
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  void Set(const std::string& name, const std::string& value) { vars_[name] = value; }
  void Unset(const std::string& name) { vars_.erase(name); }
  // value, then ':' and the old value when there was a non-empty one.
  void Prepend(const std::string& name, const std::string& value);

  // "NAME=value" strings, for execve.
  std::vector<std::string> ToStrings() const;
  const std::map<std::string, std::string>& vars() const { return vars_; }

 private:
  std::map<std::string, std::string> vars_;
};

Environment EnvironmentFromProcess();

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_ENVIRONMENT_H_
