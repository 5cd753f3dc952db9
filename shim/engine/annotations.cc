#include "shim/engine/annotations.h"

namespace numtrace::shim {

std::string_view AnnotationTable::FunctionPart(std::string_view d) {
  // Cut the parameter list and template arguments: the first '(' or '<' at depth 0.
  size_t cut = d.size();
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] == '(' || d[i] == '<') { cut = i; break; }
  }
  std::string_view head = d.substr(0, cut);
  // Drop a return type ("void ").
  size_t space = head.rfind(' ');
  if (space != std::string_view::npos) head = head.substr(space + 1);
  return head;
}

bool AnnotationTable::Add(std::string_view name, std::string_view dtypes, std::string* error) {
  if (name.empty()) {
    if (error) *error = "numtrace_annotate_kernel: empty kernel name";
    return false;
  }
  ArgDTypes parsed;
  size_t start = 0;
  while (start <= dtypes.size()) {
    size_t end = dtypes.find(',', start);
    if (end == std::string_view::npos) end = dtypes.size();
    std::string_view item = dtypes.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    start = end + 1;
    if (item.empty() || item == "-") {
      parsed.push_back(std::nullopt);
      continue;
    }
    DType t;
    if (!ParseDType(item, &t)) {
      if (error) {
        *error = "numtrace_annotate_kernel: '" + std::string(item) + "' in '" +
                 std::string(dtypes) + "' is not a dtype (f64 f32 f16 bf16 f8e4m3 f8e5m2 i64 " +
                 "i32 i16 i8 u8 bool raw, or - to leave one to inference)";
      }
      return false;
    }
    parsed.push_back(t);
  }
  std::lock_guard<std::mutex> lock(mu_);
  by_name_[std::string(name)] = std::move(parsed);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

std::optional<ArgDTypes> AnnotationTable::Lookup(std::string_view symbol,
                                                 std::string_view demangled) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (by_name_.empty()) return std::nullopt;
  for (std::string_view key : {symbol, demangled, FunctionPart(demangled)}) {
    auto it = by_name_.find(std::string(key));
    if (it != by_name_.end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace numtrace::shim
