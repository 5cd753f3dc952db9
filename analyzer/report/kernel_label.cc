#include "analyzer/report/kernel_label.h"

namespace numtrace::analyzer {
namespace {

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string KernelLabel(std::string_view name) {
  // Keep only characters at template depth 0 and before the parameter list.
  // `(anonymous namespace)` is a scope, not a parameter list, so a '(' right
  // after "::" or at the start does not end the name.
  std::string flat;
  flat.reserve(name.size());
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<' && depth == 0) {
      // One plain identifier as the only template argument is kept: it is
      // what tells `cutlass::Kernel<cutlass_80_tensorop_s1688gemm_...>` apart.
      size_t close = name.find('>', i);
      std::string_view inner =
          close == std::string_view::npos ? std::string_view() : name.substr(i + 1, close - i - 1);
      if (IsIdentifier(inner)) {
        flat.append(name.substr(i, close - i + 1));
        i = close;
        continue;
      }
    }
    if (c == '<') {
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
  size_t colons = v.substr(0, v.find('<')).rfind("::");
  if (colons != std::string_view::npos && colons + 2 < v.size()) v = v.substr(colons + 2);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.empty()) return std::string(name.substr(0, 80));
  return std::string(v);
}

}  // namespace numtrace::analyzer
