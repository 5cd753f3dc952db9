// File: analyzer/read/json_fields.h
//
// Typed access to the fields of one simdjson On Demand object, shared by the
// record parsers of the JSONL reader. Every getter returns a Status whose
// message names the field ("seq: expected an unsigned integer"); the line
// loop prefixes "PATH:LINE: ". Success costs no allocation.
//
// Keys and enum-like strings ("bf16", hex hashes) are read raw, without
// unescaping: an escaped spelling then simply does not match, which is
// correct because the writer never escapes these.
//
// Example:
//   for (auto field : object) {
//     std::string_view key = RawString(field.key().raw(), line_end);
//     if (key == "seq") NT_RETURN_IF_ERROR(GetU64(field.value(), "seq", &seq));
//   }
#ifndef NUMTRACE_ANALYZER_READ_JSON_FIELDS_H_
#define NUMTRACE_ANALYZER_READ_JSON_FIELDS_H_

#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "common/format/records.h"
#include "common/status/status_macros.h"
#include "simdjson.h"

namespace numtrace::analyzer::json {

namespace od = simdjson::ondemand;

// "field: what" as InvalidArgument.
absl::Status FieldError(std::string_view field, std::string_view what);
// "field: bad JSON (<simdjson's reason>)" or, for a type error, "field:
// expected <expected>".
absl::Status JsonError(simdjson::error_code e, std::string_view field, std::string_view expected);
// Prepends `prefix` to the message of a non-OK status ("buffers[2]." + ...).
absl::Status Prefixed(const absl::Status& s, std::string_view prefix);

// The raw text between the quotes of a key or string starting at `raw` (just
// after the opening quote); `end` bounds the search (the line's end).
std::string_view RawString(const char* raw, const char* end);

// Whether the raw key at `raw` (just after its opening quote) is exactly
// `name`. Compares a constant number of bytes, so it compiles to a few integer
// compares; reading past a short key is safe inside the padded buffer.
template <size_t N>
inline bool KeyIs(const char* raw, const char (&name)[N]) {
  return std::memcmp(raw, name, N - 1) == 0 && raw[N - 1] == '"';
}

absl::Status GetU64Slow(od::value& v, std::string_view field, uint64_t* out);
absl::Status GetDoubleSlow(od::value& v, std::string_view field, double* out);

// The common, successful case is inline; errors and null go out of line.
inline absl::Status GetU64(od::value& v, std::string_view field, uint64_t* out) {
  if (v.get_uint64().get(*out) == simdjson::SUCCESS) [[likely]] return absl::OkStatus();
  return GetU64Slow(v, field, out);
}
absl::Status GetU32(od::value& v, std::string_view field, uint32_t* out);
absl::Status GetI64(od::value& v, std::string_view field, int64_t* out);
// A finite number; JSON null (what the writer emits for a value that was not
// finite) reads as NaN rather than failing the whole trace.
inline absl::Status GetDouble(od::value& v, std::string_view field, double* out) {
  if (v.get_double().get(*out) == simdjson::SUCCESS) [[likely]] return absl::OkStatus();
  return GetDoubleSlow(v, field, out);
}
// Unescaped; valid until the parser iterates the next line.
absl::Status GetString(od::value& v, std::string_view field, std::string_view* out);
// Raw (not unescaped) string content; see RawString.
absl::Status GetRawString(od::value& v, std::string_view field, const char* end,
                          std::string_view* out);
// [x, y, z] of unsigned 32-bit integers.
absl::Status GetDim3(od::value& v, std::string_view field, uint32_t out[3]);

// "0x7f3a40000000" -> 0x7f3a40000000 (1..16 hex digits after "0x").
[[nodiscard]] bool ParseHexAddress(std::string_view s, uint64_t* out);
// Exactly 16 hex digits -> the 64-bit value.
[[nodiscard]] bool ParseHash16(std::string_view s, uint64_t* out);
// The same on a raw string (just after its opening quote): 16 hex digits and
// the closing quote, read without searching for the quote first.
[[nodiscard]] bool ParseHash16Raw(const char* raw, uint64_t* out);
[[nodiscard]] bool ParseHexAddressRaw(const char* raw, uint64_t* out);

// The enum-like strings of a buffer, on raw strings: fixed-size compares
// instead of a search for the quote and a loop over names.
[[nodiscard]] bool ParseDTypeRaw(const char* raw, DType* out);
[[nodiscard]] bool ParseRoleRaw(const char* raw, Role* out);
[[nodiscard]] bool ParseDTypeSourceRaw(const char* raw, DTypeSource* out);

}  // namespace numtrace::analyzer::json

#endif  // NUMTRACE_ANALYZER_READ_JSON_FIELDS_H_
