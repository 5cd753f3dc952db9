#include "analyzer/report/kernel_label.h"

namespace numtrace::analyzer {

std::string KernelLabel(std::string_view name) {
  // Keep only characters at template depth 0 and before the parameter list.
  // `(anonymous namespace)` is a scope, not a parameter list, so a '(' right
  // after "::" or at the start does not end the name.
  std::string flat;
  flat.reserve(name.size());
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<') {
      // "operator<" and friends are rare in kernels; treat '<' as a bracket.
      ++depth;
      continue;
    }
    if (c == '>') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth > 0) continue;
    if (c == '(') {
      bool scope = name.substr(i).starts_with("(anonymous namespace)");
      if (!scope) break;
    }
    flat.push_back(c);
  }
  // Drop a return type ("void ", "int ") before the name.
  std::string_view v = flat;
  size_t space = v.rfind(' ');
  if (space != std::string_view::npos && v.find("(anonymous namespace)") == std::string_view::npos) {
    v = v.substr(space + 1);
  }
  // Last scope component.
  size_t colons = v.rfind("::");
  if (colons != std::string_view::npos && colons + 2 < v.size()) v = v.substr(colons + 2);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.empty()) return std::string(name.substr(0, 80));
  return std::string(v);
}

}  // namespace numtrace::analyzer
