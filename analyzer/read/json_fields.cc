#include "analyzer/read/json_fields.h"
#include "analyzer/read/text_util.h"
#include "common/text/trim.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <cmath>
#include <utility>
#include <cstring>
#include <limits>


namespace numtrace::analyzer::json {
namespace {

// Hex digit values; 0xff for a byte that is not one.
struct HexTable {
  uint8_t v[256];
  constexpr HexTable() : v() {
    for (int i = 0; i < 256; ++i) v[i] = 0xff;
    for (int i = 0; i < 10; ++i) v['0' + i] = static_cast<uint8_t>(i);
    for (int i = 0; i < 6; ++i) {
      v['a' + i] = static_cast<uint8_t>(10 + i);
      v['A' + i] = static_cast<uint8_t>(10 + i);
    }
  }
};
constexpr HexTable kHex;

inline int HexValue(char c) {
  uint8_t d = kHex.v[static_cast<unsigned char>(c)];
  return d == 0xff ? -1 : d;
}

bool ParseHexDigits(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d = HexValue(c);
    if (d < 0) return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

// A JSON number that is well formed but does not fit: an integer beyond
// 64 bits, or a number beyond a double's range (1e999). `v` is still
// unread after a failed get.
bool OutOfRange(od::value& v, bool integer) {
  // The raw token runs up to the next structural character (", 1}").
  std::string_view token = v.raw_json_token();
  token = Trim(token.substr(0, token.find_first_of(",}] \t\r\n")));
  if (token.empty()) return false;
  const bool is_int = token.find_first_of(".eE") == std::string_view::npos;
  if (integer && is_int) {
    std::string_view digits = token.front() == '-' ? token.substr(1) : token;
    return !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
  }
  if (token.find_first_not_of("0123456789+-.eE") != std::string_view::npos) return false;
  // strtod tells overflow (HUGE_VAL) from underflow (1e-999 -> 0, fine).
  const std::string text(token);
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  return errno == ERANGE && end == text.c_str() + text.size() && std::isinf(d);
}

absl::Status RangeError(std::string_view field, std::string_view expected) {
  return FieldError(field, Cat("number out of range (expected ", expected, ")"));
}

}  // namespace

absl::Status FieldError(std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(Cat(field, ": ", what));
}

absl::Status JsonError(simdjson::error_code e, std::string_view field, std::string_view expected) {
  switch (e) {
    case simdjson::INCORRECT_TYPE:
    case simdjson::NUMBER_OUT_OF_RANGE:
    case simdjson::NUMBER_ERROR:
      return FieldError(field, Cat("expected ", expected));
    default:
      return FieldError(field, Cat("bad JSON (", simdjson::error_message(e), ")"));
  }
}

absl::Status Prefixed(const absl::Status& s, std::string_view prefix) {
  if (s.ok()) return s;
  return absl::Status(s.code(), Cat(prefix, s.message()));
}

std::string_view RawString(const char* raw, const char* end) {
  const void* q = std::memchr(raw, '"', static_cast<size_t>(end - raw));
  const char* stop = q ? static_cast<const char*>(q) : end;
  return {raw, static_cast<size_t>(stop - raw)};
}

absl::Status GetU64Slow(od::value& v, std::string_view field, uint64_t* out) {
  auto e = v.get_uint64().get(*out);
  if (e && OutOfRange(v, true)) return RangeError(field, "an unsigned 64-bit integer");
  return e ? JsonError(e, field, "an unsigned integer") : absl::OkStatus();
}

absl::Status GetU32(od::value& v, std::string_view field, uint32_t* out) {
  uint64_t x;
  auto e = v.get_uint64().get(x);
  if ((e && OutOfRange(v, true)) || (!e && x > std::numeric_limits<uint32_t>::max())) {
    return RangeError(field, "an unsigned 32-bit integer");
  }
  if (e) {
    return JsonError(e ? e : simdjson::NUMBER_OUT_OF_RANGE, field, "an unsigned 32-bit integer");
  }
  *out = static_cast<uint32_t>(x);
  return absl::OkStatus();
}

absl::Status GetI64(od::value& v, std::string_view field, int64_t* out) {
  auto e = v.get_int64().get(*out);
  if (e && OutOfRange(v, true)) return RangeError(field, "a 64-bit integer");
  return e ? JsonError(e, field, "an integer") : absl::OkStatus();
}

absl::Status GetDoubleSlow(od::value& v, std::string_view field, double* out) {
  auto e = v.get_double().get(*out);
  if (!e) return absl::OkStatus();
  bool is_null = false;
  if (e == simdjson::INCORRECT_TYPE && !v.is_null().get(is_null) && is_null) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return absl::OkStatus();
  }
  if (OutOfRange(v, false)) return RangeError(field, "a number within a double's range");
  return JsonError(e, field, "a number");
}

absl::Status GetString(od::value& v, std::string_view field, std::string_view* out) {
  auto e = v.get_string().get(*out);
  return e ? JsonError(e, field, "a string") : absl::OkStatus();
}

absl::Status GetRawString(od::value& v, std::string_view field, const char* end,
                          std::string_view* out) {
  od::raw_json_string raw;
  auto e = v.get_raw_json_string().get(raw);
  if (e) return JsonError(e, field, "a string");
  *out = RawString(raw.raw(), end);
  return absl::OkStatus();
}

absl::Status GetDim3(od::value& v, std::string_view field, uint32_t out[3]) {
  od::array arr;
  auto e = v.get_array().get(arr);
  if (e) return JsonError(e, field, "an array of 3 unsigned integers");
  int i = 0;
  for (auto element : arr) {
    od::value x;
    if ((e = std::move(element).get(x))) return JsonError(e, field, "an array of 3 unsigned integers");
    if (i >= 3) return FieldError(field, "expected an array of 3 unsigned integers");
    uint32_t d;
    if (!GetU32(x, field, &d).ok()) {
      return FieldError(field, "expected an array of 3 unsigned integers");
    }
    out[i++] = d;
  }
  if (i != 3) return FieldError(field, "expected an array of 3 unsigned integers");
  return absl::OkStatus();
}

bool ParseHexAddress(std::string_view s, uint64_t* out) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return false;
  return ParseHexDigits(s.substr(2), out);
}

bool ParseHash16(std::string_view s, uint64_t* out) {
  return s.size() == 16 && ParseHexDigits(s, out);
}

bool ParseHexAddressRaw(const char* raw, uint64_t* out) {
  if (raw[0] != '0' || (raw[1] != 'x' && raw[1] != 'X')) return false;
  uint64_t v = 0;
  int i = 2;
  for (; i < 18; ++i) {
    uint8_t d = kHex.v[static_cast<unsigned char>(raw[i])];
    if (d == 0xff) break;
    v = (v << 4) | d;
  }
  if (i == 2 || raw[i] != '"') return false;
  *out = v;
  return true;
}

bool ParseDTypeRaw(const char* raw, DType* out) {
  switch (raw[0]) {
    case 'f':
      if (KeyIs(raw, "f32")) *out = DType::kF32;
      else if (KeyIs(raw, "f16")) *out = DType::kF16;
      else if (KeyIs(raw, "f64")) *out = DType::kF64;
      else if (KeyIs(raw, "f8e4m3")) *out = DType::kF8E4M3;
      else if (KeyIs(raw, "f8e5m2")) *out = DType::kF8E5M2;
      else return false;
      return true;
    case 'b':
      if (KeyIs(raw, "bf16")) *out = DType::kBF16;
      else if (KeyIs(raw, "bool")) *out = DType::kBool;
      else return false;
      return true;
    case 'i':
      if (KeyIs(raw, "i32")) *out = DType::kI32;
      else if (KeyIs(raw, "i64")) *out = DType::kI64;
      else if (KeyIs(raw, "i16")) *out = DType::kI16;
      else if (KeyIs(raw, "i8")) *out = DType::kI8;
      else return false;
      return true;
    case 'u':
      if (!KeyIs(raw, "u8")) return false;
      *out = DType::kU8;
      return true;
    case 'r':
      if (!KeyIs(raw, "raw")) return false;
      *out = DType::kRaw;
      return true;
    default:
      return false;
  }
}

bool ParseRoleRaw(const char* raw, Role* out) {
  if (KeyIs(raw, "out")) *out = Role::kOut;
  else if (KeyIs(raw, "in")) *out = Role::kIn;
  else if (KeyIs(raw, "unknown")) *out = Role::kUnknown;
  else return false;
  return true;
}

bool ParseDTypeSourceRaw(const char* raw, DTypeSource* out) {
  if (KeyIs(raw, "name")) *out = DTypeSource::kName;
  else if (KeyIs(raw, "signature")) *out = DTypeSource::kSignature;
  else if (KeyIs(raw, "sniffed")) *out = DTypeSource::kSniffed;
  else if (KeyIs(raw, "default")) *out = DTypeSource::kDefault;
  else return false;
  return true;
}

bool ParseHash16Raw(const char* raw, uint64_t* out) {
  uint64_t v = 0;
  uint8_t bad = 0;
  for (int i = 0; i < 16; ++i) {
    uint8_t d = kHex.v[static_cast<unsigned char>(raw[i])];
    bad |= d;  // 0xff has the high bit set; digits never do
    v = (v << 4) | (d & 15);
  }
  if ((bad & 0x80) || raw[16] != '"') return false;
  *out = v;
  return true;
}

}  // namespace numtrace::analyzer::json
