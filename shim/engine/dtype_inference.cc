// File: shim/engine/dtype_inference.cc
//
// Picks the family of a name (dtype_rules.h) and reads it: C++ template
// arguments and parameters (with dtype_name_parts.h), library tokens, NCCL
// and nvjet codes, and mangled names the demangler refuses.
#include "shim/engine/dtype_inference.h"

#include <cctype>
#include <optional>

#include "common/names/demangle.h"
#include "common/text/trim.h"
#include "shim/engine/dtype_name_parts.h"
#include "shim/engine/dtype_rules.h"

namespace numtrace::shim {
namespace {

using dtype_internal::CollectTypes;
using dtype_internal::MatchClose;
using dtype_internal::NameParts;
using dtype_internal::NormalizeType;
using dtype_internal::ReplaceAll;
using dtype_internal::SplitName;
using dtype_internal::SplitTopLevel;

constexpr size_t npos = std::string_view::npos;

// Strong beats weak, and integers beat bool (a mask: where(bool, long,
// long) writes longs); an opaque type ends the scan.
struct Pick {
  std::optional<DType> strong, weak, mask;
  bool opaque = false;
  void Add(const TypeRule& rule) {
    if (strong || opaque) return;
    if (rule.role == TypeRole::kStrong) strong = rule.dtype;
    if (rule.role == TypeRole::kWeak) {
      std::optional<DType>& slot = rule.dtype == DType::kBool ? mask : weak;
      if (!slot) slot = rule.dtype;
    }
    if (rule.role == TypeRole::kOpaque) opaque = true;
  }
  std::optional<DType> Result() const { return strong ? strong : weak ? weak : mask; }
};

// `T2` in Nsight parameter lists is the kernel's 2nd template argument.
std::string ResolveTemplateParam(const std::string& t, const NameParts& p) {
  if (t.size() >= 2 && t[0] == 'T' && std::isdigit(static_cast<unsigned char>(t[1]))) {
    size_t n = std::stoul(t.substr(1));
    if (n >= 1 && n <= p.targ_list.size()) return NormalizeType(p.targ_list[n - 1]);
  }
  return t;
}

// ATen structs passed by value whose first member is the data pointer.
bool IsTensorStruct(std::string_view name) {
  size_t colon = name.rfind("::");
  std::string_view last = colon == npos ? name : name.substr(colon + 2);
  return last == "TensorInfo" || last == "GenericPackedTensorAccessor" ||
         last == "PackedTensorAccessor" || last == "PackedTensorAccessor32" ||
         last == "PackedTensorAccessor64";
}

// dtype of each parameter the name types: pointers and tensor structs.
std::vector<std::pair<uint32_t, const TypeRule*>> ParamTypes(const NameParts& p) {
  std::vector<std::pair<uint32_t, const TypeRule*>> found;
  std::vector<std::string_view> params = SplitTopLevel(p.params);
  for (uint32_t i = 0; i < params.size(); ++i) {
    std::string_view param = params[i];
    if (param.ends_with("...")) break;  // a pack: later indices are unknown
    int stars = 0;
    std::string type;
    size_t angle = param.find('<');
    if (angle != npos && IsTensorStruct(NormalizeType(param.substr(0, angle)))) {
      size_t close = MatchClose(param, angle);
      if (close == npos) continue;
      std::vector<std::string_view> args = SplitTopLevel(param.substr(angle + 1, close - angle - 1));
      if (args.empty()) continue;
      type = NormalizeType(args[0]);
    } else {
      type = NormalizeType(param, &stars);
      if (stars != 1) continue;
    }
    const TypeRule* rule = FindTypeRule(ResolveTemplateParam(type, p));
    if (rule != nullptr && rule->role != TypeRole::kOpaque) found.emplace_back(i, rule);
  }
  return found;
}

// Library names: `_`-separated tokens, first that names a type.
std::optional<DType> TokenScan(std::string_view s, bool* opaque) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && !std::isalnum(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && std::isalnum(static_cast<unsigned char>(s[j]))) ++j;
    DType t;
    TokenHit hit = TokenDType(s.substr(i, j - i), &t);
    if (hit == TokenHit::kDType) return t;
    if (hit == TokenHit::kOpaque) {
      *opaque = true;
      return std::nullopt;
    }
    i = j;
  }
  return std::nullopt;
}

std::vector<std::string_view> Underscored(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '_') {
      if (i > start) parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

std::optional<DType> ReadNccl(std::string_view name) {
  std::vector<std::string_view> t = Underscored(name);
  if (t.size() < 2 || NcclOpMovesBytes(t[1])) return std::nullopt;
  for (size_t i = 2; i < t.size(); ++i) {
    DType d;
    // int8_t, uint8_t, fp8_e4m3 span two tokens.
    if (i + 1 < t.size()) {
      std::string joined = std::string(t[i]) + "_" + std::string(t[i + 1]);
      if (NcclTypeToken(joined, &d)) return d;
    }
    if (NcclTypeToken(t[i], &d)) return d;
  }
  return std::nullopt;
}

std::optional<DType> ReadNvjet(std::string_view name) {
  std::vector<std::string_view> t = Underscored(name);
  for (size_t i = 1; i < t.size(); ++i) {
    bool sm = t[i].size() > 2 && t[i].starts_with("sm") &&
              std::isdigit(static_cast<unsigned char>(t[i][2]));
    if (sm) continue;
    DType d;
    if (NvjetCodeDType(t[i], &d)) return d;
    return std::nullopt;
  }
  return std::nullopt;
}

// cuBLAS: the last non-const `needle<T>` descriptor in the template
// arguments is the output tensor.
std::optional<DType> ReadDescriptor(std::string_view head, std::string_view needle) {
  std::optional<DType> last;
  for (size_t at = head.find(needle); at != npos; at = head.find(needle, at + 1)) {
    size_t open = at + needle.size() - 1;  // the needle ends with '<'
    size_t close = MatchClose(head, open);
    if (close == npos) break;
    std::string arg = NormalizeType(head.substr(open + 1, close - open - 1));
    if (head.substr(open + 1, close - open - 1).find("const") != npos) continue;
    const TypeRule* rule = FindTypeRule(arg);
    if (rule != nullptr && rule->role != TypeRole::kOpaque) last = rule->dtype;
  }
  return last;
}

// A mangled name the demangler refused (truncated by a profiler): its
// <length><identifier> source names still hold CUTLASS/c10 type names.
std::optional<DType> ReadMangled(std::string_view s) {
  Pick pick;
  std::optional<DType> token;
  bool opaque = false;
  for (size_t i = 2; i < s.size();) {
    char c = s[i];
    if (c == 'S' && i + 1 < s.size() && std::islower(static_cast<unsigned char>(s[i + 1]))) {
      i += 2;  // St, Sa, Ss...: std:: abbreviations
      continue;
    }
    if (c == 'L' || c == 'S' || c == 'T') {
      // Literals `Li128E` and substitutions `S4_`, `T_` hold digits that
      // are no lengths: skip to their terminator.
      size_t end = s.find(c == 'L' ? 'E' : '_', i + 1);
      i = end == npos ? s.size() : end + 1;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      n = n * 10 + static_cast<size_t>(s[i] - '0');
      if (n > s.size()) break;
      ++i;
    }
    if (n == 0 || i + n > s.size()) break;
    std::string_view id = s.substr(i, n);
    if (const TypeRule* rule = FindTypeRule(id)) pick.Add(*rule);
    if (!token && !opaque) token = TokenScan(id, &opaque);
    i += n;
  }
  return pick.Result() ? pick.Result() : token;
}

// C++ names: template arguments, then typed parameters, then name tokens.
// `forced`: a primary already decided by the family (kDescriptor).
void ReadCxx(const NameParts& p, int skip_arg, std::optional<DType> forced, KernelDTypes* out) {
  Pick pick;
  for (size_t a = 0; a < p.targ_list.size() && !pick.strong && !pick.opaque; ++a) {
    if (static_cast<int>(a) == skip_arg) continue;
    std::vector<std::string> types;
    CollectTypes(p.targ_list[a], &types);
    for (const std::string& t : types) {
      if (const TypeRule* rule = FindTypeRule(t)) pick.Add(*rule);
    }
  }
  std::vector<std::pair<uint32_t, const TypeRule*>> params = ParamTypes(p);
  std::optional<DType> primary = forced ? forced : pick.Result();
  // A family with an index argument (vectorized_gather_kernel<16, long>
  // moves char* data) must not take the index's type from the parameters.
  if (!primary && !pick.opaque && skip_arg < 0) {
    Pick from_params;
    for (const auto& [index, rule] : params) from_params.Add(*rule);
    primary = from_params.Result();
  }
  if (!primary && !pick.opaque) {
    bool opaque = false;
    primary = TokenScan(p.head, &opaque);
  }
  if (primary) {
    out->primary = *primary;
    out->source = DTypeSource::kName;
  }
  for (const auto& [index, rule] : params) {
    if (rule->dtype != out->primary) out->per_arg.emplace_back(index, rule->dtype);
  }
}

}  // namespace

KernelDTypes InferKernelDTypes(std::string_view name) {
  std::string s = Demangle(Trim(name));
  // One spelling for the anonymous namespace, so `<unnamed>` is no bracket.
  ReplaceAll(&s, "(anonymous namespace)", "anon_ns");
  ReplaceAll(&s, "<unnamed>", "anon_ns");
  NameParts parts = SplitName(s);
  const FamilyRule& family = MatchFamily(parts.qualified, s);
  KernelDTypes out;
  std::optional<DType> dtype;
  switch (family.reading) {
    case NameReading::kNoDType: break;
    case NameReading::kFixed: dtype = family.dtype; break;
    case NameReading::kNccl: dtype = ReadNccl(parts.qualified); break;
    case NameReading::kNvjet: dtype = ReadNvjet(parts.qualified); break;
    case NameReading::kFmhaSm100: {
      DType d;
      if (FmhaSm100DType(parts.qualified, &d)) dtype = d;
      break;
    }
    case NameReading::kDescriptor:
      ReadCxx(parts, -1, ReadDescriptor(parts.head, family.needle), &out);
      return out;
    case NameReading::kCxx:
      if (s.starts_with("_Z")) {
        dtype = ReadMangled(s);
        break;
      }
      ReadCxx(parts, family.skip_arg, std::nullopt, &out);
      return out;
  }
  if (dtype && *dtype != DType::kRaw) {
    out.primary = *dtype;
    out.source = DTypeSource::kName;
  }
  return out;
}

bool ParseDTypeList(std::string_view spec, std::vector<DType>* out, std::string* error) {
  out->clear();
  if (Trim(spec).empty()) {
    *error = "dtype list is empty (expected e.g. \"bf16,bf16,f32,i64\")";
    return false;
  }
  size_t start = 0;
  for (size_t index = 1;; ++index) {
    size_t comma = spec.find(',', start);
    std::string_view entry = Trim(spec.substr(start, comma == npos ? npos : comma - start));
    DType t;
    if (entry.empty()) {
      *error = "dtype list \"" + std::string(spec) + "\": entry " + std::to_string(index) +
               " is empty";
      out->clear();
      return false;
    }
    if (!ParseDType(entry, &t)) {
      *error = "dtype list \"" + std::string(spec) + "\": entry " + std::to_string(index) +
               " \"" + std::string(entry) +
               "\" is not a dtype (expected one of f64 f32 f16 bf16 f8e4m3 f8e5m2 i64 i32 i16 "
               "i8 u8 bool raw)";
      out->clear();
      return false;
    }
    out->push_back(t);
    if (comma == npos) return true;
    start = comma + 1;
  }
}

}  // namespace numtrace::shim
