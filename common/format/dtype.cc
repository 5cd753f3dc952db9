#include "common/format/dtype.h"

#include "common/format/enum_list.h"

namespace numtrace {

std::string_view DTypeName(DType t) { return kDTypeNames[static_cast<int>(t)]; }

bool ParseDType(std::string_view s, DType* out) {
  auto t = EnumFromName<DType>(kDTypeNames, s);
  if (t) *out = *t;
  return t.has_value();
}

std::string_view DTypeSourceName(DTypeSource s) { return kDTypeSourceNames[static_cast<int>(s)]; }

bool ParseDTypeSource(std::string_view s, DTypeSource* out) {
  auto t = EnumFromName<DTypeSource>(kDTypeSourceNames, s);
  if (t) *out = *t;
  return t.has_value();
}

}  // namespace numtrace
