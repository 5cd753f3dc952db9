#include "common/format/npy.h"

namespace numtrace {

std::string_view NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kF64: return "<f8";
    case DType::kF32: return "<f4";
    case DType::kF16: return "<f2";
    case DType::kBF16: return "<u2";    // bit patterns; the sidecar says bf16
    case DType::kF8E4M3: return "|u1";  // likewise for both f8 formats
    case DType::kF8E5M2: return "|u1";
    case DType::kI64: return "<i8";
    case DType::kI32: return "<i4";
    case DType::kI16: return "<i2";
    case DType::kI8: return "|i1";
    case DType::kU8: return "|u1";
    case DType::kBool: return "|b1";
    case DType::kRaw: return "|u1";
  }
  return "|u1";
}

uint64_t NpyElementCount(DType dtype, uint64_t bytes) {
  return bytes / static_cast<uint64_t>(DTypeSize(dtype));
}

std::string NpyHeader(DType dtype, uint64_t count) {
  std::string dict = "{'descr': '";
  dict.append(NpyDescr(dtype));
  dict.append("', 'fortran_order': False, 'shape': (");
  dict.append(std::to_string(count));
  dict.append(",), }");
  // magic(6) + version(2) + length(2) + dict + padding + '\n' = multiple of 64,
  // as NumPy writes it, so the array data starts aligned.
  const size_t unpadded = 10 + dict.size() + 1;
  const size_t total = (unpadded + 63) / 64 * 64;
  dict.append(total - unpadded, ' ');
  dict.push_back('\n');
  const size_t len = dict.size();
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  out.append(dict);
  return out;
}

}  // namespace numtrace
