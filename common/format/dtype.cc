#include "common/format/dtype.h"

#include <array>

#include "common/format/enum_list.h"

namespace numtrace {
namespace {
constexpr std::array<std::string_view, kDTypeCount> kNames = {
    "f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i64",
    "i32", "i16", "i8",  "u8",   "bool",   "raw"};
constexpr std::array<std::string_view, 4> kSourceNames = {"name", "signature", "sniffed",
                                                          "default"};
}  // namespace

std::string_view DTypeName(DType t) { return kNames[static_cast<int>(t)]; }

bool ParseDType(std::string_view s, DType* out) {
  auto t = EnumFromName<DType>(kNames, s);
  if (t) *out = *t;
  return t.has_value();
}

std::string_view DTypeSourceName(DTypeSource s) { return kSourceNames[static_cast<int>(s)]; }

bool ParseDTypeSource(std::string_view s, DTypeSource* out) {
  auto t = EnumFromName<DTypeSource>(kSourceNames, s);
  if (t) *out = *t;
  return t.has_value();
}

}  // namespace numtrace
