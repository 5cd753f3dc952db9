#include "launcher/environment.h"

#include <unistd.h>  // environ (declared there under _GNU_SOURCE, which g++ sets)

#include <cstring>

namespace numtrace::launcher {

const std::string* Environment::Find(const std::string& name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second;
}

std::string Environment::Get(const std::string& name, const std::string& fallback) const {
  const std::string* v = Find(name);
  return v ? *v : fallback;
}

void Environment::Prepend(const std::string& name, const std::string& value) {
  const std::string* old = Find(name);
  vars_[name] = (old && !old->empty()) ? value + ":" + *old : value;
}

std::vector<std::string> Environment::ToStrings() const {
  std::vector<std::string> out;
  out.reserve(vars_.size());
  for (const auto& [k, v] : vars_) out.push_back(k + "=" + v);
  return out;
}

Environment EnvironmentFromProcess() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    vars.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return Environment(std::move(vars));
}

}  // namespace numtrace::launcher
