#include "analyzer/tensors/npy_reader.h"

#include <charconv>
#include <new>

#include "common/io/bounded_file.h"
#include "common/format/npy.h"
#include "common/status/status_macros.h"

namespace numtrace::analyzer {
namespace {

absl::Status Bad(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(path + ": not a readable .npy file: " + std::string(what));
}

// The value text after 'key': in a header dict, up to the next top-level
// ',' or '}' (a shape tuple keeps its commas).
std::optional<std::string_view> DictValue(std::string_view dict, std::string_view key) {
  std::string q1 = "'" + std::string(key) + "'";
  size_t at = dict.find(q1);
  if (at == std::string_view::npos) {
    q1 = "\"" + std::string(key) + "\"";
    at = dict.find(q1);
    if (at == std::string_view::npos) return std::nullopt;
  }
  size_t colon = dict.find(':', at + q1.size());
  if (colon == std::string_view::npos) return std::nullopt;
  size_t start = colon + 1;
  while (start < dict.size() && dict[start] == ' ') ++start;
  int depth = 0;
  size_t end = start;
  for (; end < dict.size(); ++end) {
    const char c = dict[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string_view v = dict.substr(start, end - start);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

}  // namespace

std::optional<DType> DTypeForDescr(std::string_view d) {
  if (d == "<u2") return DType::kBF16;
  if (d == "|u1" || d == "<u1" || d == "u1") return DType::kU8;
  if (d == "|i1" || d == "<i1" || d == "i1") return DType::kI8;
  if (d == "|b1" || d == "<b1" || d == "b1") return DType::kBool;
  for (DType t : {DType::kF64, DType::kF32, DType::kF16, DType::kI64, DType::kI32, DType::kI16}) {
    if (d == NpyDescr(t)) return t;
  }
  return std::nullopt;
}

absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes, const std::string& path) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6)) {
    return Bad(path, "no \\x93NUMPY magic");
  }
  const auto major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad(path, "header cut short");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return Bad(path, "format version " + std::to_string(major) + " (1, 2 or 3 expected)");
  }
  if (bytes.size() < offset + header_len) return Bad(path, "header cut short");
  std::string_view dict = bytes.substr(offset, header_len);
  auto descr = DictValue(dict, "descr");
  auto fortran = DictValue(dict, "fortran_order");
  auto shape = DictValue(dict, "shape");
  if (!descr || !fortran || !shape || descr->size() < 2) return Bad(path, "header lacks descr, fortran_order or shape");
  NpyArray a;
  a.descr = std::string(descr->substr(1, descr->size() - 2));
  if (a.descr.empty() || a.descr[0] == '>') return Bad(path, "descr '" + a.descr + "' is not little-endian");
  int item = 0;
  if (a.descr.size() < 3) return Bad(path, "descr '" + a.descr + "' is not a plain number type");
  {
    std::string_view digits = std::string_view(a.descr).substr(2);
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), item);
    if (a.descr.size() < 3 || r.ec != std::errc() || r.ptr != digits.data() + digits.size() || item <= 0 ||
        item > 8) {
      return Bad(path, "descr '" + a.descr + "' is not a plain number type");
    }
  }
  // Product of the shape's dimensions; "()" is a scalar (1 element).
  uint64_t count = 1;
  std::string_view s = *shape;
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return Bad(path, "shape is not a tuple");
  s = s.substr(1, s.size() - 2);
  int dims = 0;
  while (!s.empty()) {
    while (!s.empty() && (s.front() == ' ' || s.front() == ',')) s.remove_prefix(1);
    if (s.empty()) break;
    uint64_t d = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), d);
    if (r.ec != std::errc()) return Bad(path, "shape holds a non-number");
    if (d != 0 && count > UINT64_MAX / d) return Bad(path, "shape too large");
    count *= d;
    ++dims;
    s.remove_prefix(r.ptr - s.data());
  }
  if (*fortran != "False" && dims > 1) return Bad(path, "Fortran-order array (C order expected)");
  const size_t data_at = offset + header_len;
  const uint64_t want = count * static_cast<uint64_t>(item);
  if (count != 0 && want / count != static_cast<uint64_t>(item)) return Bad(path, "shape too large");
  if (bytes.size() - data_at != want) {
    return Bad(path, "holds " + std::to_string(bytes.size() - data_at) + " data bytes, the header says " +
                         std::to_string(want));
  }
  a.count = count;
  a.data.assign(bytes.begin() + data_at, bytes.end());
  return a;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  NT_ASSIGN_OR_RETURN(const std::string bytes, ReadBoundedFile(path, "the .npy array", kMaxNpyBytes));
  try {
    return ParseNpy(bytes, path);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(path + ": out of memory decoding the .npy array (" +
                                        ByteCount(bytes.size()) + "); it needs more memory than this process may use");
  }
}

}  // namespace numtrace::analyzer
