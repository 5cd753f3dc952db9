#include "analyzer/read/debugmode_reader.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/read/file_contents.h"
#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/text_util.h"

namespace numtrace::analyzer {
namespace {

// One `[key]` block as written, before it becomes a Kernel.
struct Block {
  uint64_t line = 0;
  std::string_view key;
  std::vector<uint64_t> numel;  // one per parsed shape
  std::vector<std::string_view> dtypes;
  std::vector<double> l1, l2, min, max, mean, out_hash;
  std::vector<std::optional<double>> in_hashes;
};

bool ParseDouble(std::string_view s, double* out) {
  s = Trim(s);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "1.0, 2.5" -> {1.0, 2.5}; brackets of a printed list are ignored.
absl::Status ParseNumbers(std::string_view field, std::string_view value, std::vector<double>* out) {
  value = Trim(value);
  if (ConsumePrefix(&value, "[") || ConsumePrefix(&value, "(")) {
    if (!value.empty()) value.remove_suffix(1);
  }
  for (std::string_view token : Split(value, ',')) {
    double v;
    if (!ParseDouble(token, &v)) {
      return absl::InvalidArgumentError(
          Cat(field, ": not a number: \"", Trim(token).substr(0, 40), "\""));
    }
    out->push_back(v);
  }
  return absl::OkStatus();
}

// Input hashes may hold "None" for inputs that are not tensors.
void ParseOptionalNumbers(std::string_view value, std::vector<std::optional<double>>* out) {
  for (std::string_view token : Split(value, ',')) {
    double v;
    if (ParseDouble(token, &v)) out->push_back(v);
    else out->push_back(std::nullopt);
  }
}

// Every innermost "[d0, d1, ...]" is one shape: handles "torch.Size([2, 3])"
// as well as tuple outputs "(torch.Size([2]), torch.Size([]))".
absl::Status ParseShapes(std::string_view value, std::vector<uint64_t>* numel) {
  size_t pos = 0;
  while ((pos = value.find('[', pos)) != std::string_view::npos) {
    size_t close = value.find_first_not_of("0123456789, ", pos + 1);
    if (close == std::string_view::npos || value[close] != ']') {
      ++pos;
      continue;
    }
    uint64_t n = 1;
    for (std::string_view dim : Split(value.substr(pos + 1, close - pos - 1), ',')) {
      if (Trim(dim).empty()) continue;  // "[]" (a scalar) and "[3,]"
      uint64_t d;
      if (!ParseUint(Trim(dim), &d)) {
        return absl::InvalidArgumentError(Cat("Shape: bad dimension \"", dim.substr(0, 30), "\""));
      }
      n = (d != 0 && n > UINT64_MAX / d) ? UINT64_MAX : n * d;
    }
    numel->push_back(n);
    pos = close + 1;
  }
  if (numel->empty()) {
    return absl::InvalidArgumentError(Cat("Shape: no [dims] in \"", value.substr(0, 60), "\""));
  }
  return absl::OkStatus();
}

DType TorchDType(std::string_view s) {
  s = Trim(s);
  ConsumePrefix(&s, "torch.");
  struct Entry { std::string_view name; DType t; };
  static constexpr Entry kMap[] = {
      {"float32", DType::kF32},   {"float", DType::kF32},          {"float64", DType::kF64},
      {"double", DType::kF64},    {"float16", DType::kF16},        {"half", DType::kF16},
      {"bfloat16", DType::kBF16}, {"float8_e4m3fn", DType::kF8E4M3},
      {"float8_e4m3fnuz", DType::kF8E4M3}, {"float8_e5m2", DType::kF8E5M2},
      {"float8_e5m2fnuz", DType::kF8E5M2}, {"int64", DType::kI64}, {"long", DType::kI64},
      {"int32", DType::kI32},     {"int", DType::kI32},            {"int16", DType::kI16},
      {"short", DType::kI16},     {"int8", DType::kI8},            {"uint8", DType::kU8},
      {"bool", DType::kBool}};
  for (const Entry& e : kMap) {
    if (e.name == s) return e.t;
  }
  return DType::kRaw;
}

// The statistics are aggregates; see the header for how counts are derived.
BufferStats OutputStats(const Block& b, size_t i, uint64_t n) {
  auto at = [i](const std::vector<double>& v) -> std::optional<double> {
    if (i < v.size()) return v[i];
    return std::nullopt;
  };
  BufferStats s;
  s.n = n;
  std::optional<double> l1 = at(b.out_hash);
  if (!l1) l1 = at(b.l1);
  std::optional<double> l2 = at(b.l2), mn = at(b.min), mx = at(b.max), mean = at(b.mean);
  bool any_nan = false;
  for (const auto& v : {l1, l2, mn, mx, mean}) any_nan |= v && std::isnan(*v);
  if (any_nan) {
    s.nan = 1;
  } else {
    if (mx && std::isinf(*mx) && *mx > 0) s.inf = 1;
    if (mn && std::isinf(*mn) && *mn < 0) s.ninf = 1;
  }
  s.n = std::max<uint64_t>(s.n, s.nan + s.inf + s.ninf);
  if (mn && mx && std::isfinite(*mn) && std::isfinite(*mx)) {
    s.has_range = true;
    s.min = *mn;
    s.max = *mx;
  }
  if (l2) s.l2 = *l2;
  if (mean) s.sum = *mean * static_cast<double>(n);
  if (l1) {
    s.l1 = *l1;
    s.hash = std::bit_cast<uint64_t>(*l1);
  } else {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the bits we have
    for (const auto& v : {l2, mn, mx, mean}) {
      h = (h ^ (v ? std::bit_cast<uint64_t>(*v) : 0)) * 0x100000001b3ull;
    }
    s.hash = h;
  }
  return s;
}

void AppendKernel(const Block& b, uint64_t seq, Trace* trace) {
  Kernel k;
  k.seq = seq;
  k.name = trace->strings.Intern(b.key);
  k.demangled = trace->strings.Intern(DebugModeOpName(b.key));
  k.first_buffer = static_cast<uint32_t>(trace->buffers.size());
  size_t outputs = std::max<size_t>({b.out_hash.size(), b.numel.size(), size_t{1}});
  for (size_t i = 0; i < outputs; ++i) {
    Buffer buf;
    buf.arg = static_cast<uint32_t>(i);
    buf.role = Role::kOut;
    std::string_view dtype = i < b.dtypes.size() ? b.dtypes[i] : b.dtypes.empty() ? "" : b.dtypes[0];
    buf.dtype = TorchDType(dtype);
    buf.dtype_from = buf.dtype == DType::kRaw ? DTypeSource::kDefault : DTypeSource::kSignature;
    uint64_t n = i < b.numel.size() ? b.numel[i] : 0;
    buf.bytes = n * DTypeSize(buf.dtype);
    buf.stats = OutputStats(b, i, n);
    trace->buffers.push_back(buf);
  }
  for (size_t i = 0; i < b.in_hashes.size(); ++i) {
    if (!b.in_hashes[i]) continue;
    Buffer buf;
    buf.arg = static_cast<uint32_t>(i);
    buf.role = Role::kIn;
    buf.stats.l1 = *b.in_hashes[i];
    buf.stats.hash = std::bit_cast<uint64_t>(*b.in_hashes[i]);
    trace->buffers.push_back(buf);
  }
  k.buffer_count = static_cast<uint32_t>(trace->buffers.size() - k.first_buffer);
  trace->kernels.push_back(k);
}

// Applies one "Key: value" line to the block.
absl::Status ApplyStat(std::string_view key, std::string_view value, Block* b) {
  if (key == "Shape") {
    // The tracer writes "Shape: torch.Size([..]), Dtype: torch.bfloat16".
    size_t dt = value.find("Dtype:");
    if (dt != std::string_view::npos) {
      for (std::string_view d : Split(value.substr(dt + 6), ',')) {
        if (!Trim(d).empty()) b->dtypes.push_back(Trim(d));
      }
      value = value.substr(0, dt);
    }
    return ParseShapes(value, &b->numel);
  }
  if (key == "Dtype") {
    std::string list(value);
    for (char& c : list) {
      if (c == '(' || c == ')' || c == '[' || c == ']') c = ',';
    }
    size_t at = 0;  // offsets into `list` map 1:1 onto `value`
    for (std::string_view d : Split(list, ',')) {
      std::string_view piece = Trim(value.substr(at, d.size()));
      at += d.size() + 1;
      if (!piece.empty()) b->dtypes.push_back(piece);
    }
    return absl::OkStatus();
  }
  if (key == "L1 norm") return ParseNumbers(key, value, &b->l1);
  if (key == "L2 norm") return ParseNumbers(key, value, &b->l2);
  if (key == "Min") return ParseNumbers(key, value, &b->min);
  if (key == "Max") return ParseNumbers(key, value, &b->max);
  if (key == "Mean") return ParseNumbers(key, value, &b->mean);
  if (key == "Output hash") {
    if (Trim(value).empty()) return absl::OkStatus();  // in-place op
    return ParseNumbers(key, value, &b->out_hash);
  }
  if (key == "Input hashes") {
    ParseOptionalNumbers(value, &b->in_hashes);
    return absl::OkStatus();
  }
  return absl::OkStatus();  // Location, Phase, Input producers, later additions
}

}  // namespace

std::string_view DebugModeOpName(std::string_view key) {
  size_t slash = key.rfind("/op_");
  if (slash == std::string_view::npos) return key;
  std::string_view rest = key.substr(slash + 4);
  size_t digits = 0;
  while (digits < rest.size() && IsDigit((rest[digits]))) ++digits;
  if (digits == 0 || digits >= rest.size() || rest[digits] != '_' || digits + 1 == rest.size()) {
    return key;
  }
  return rest.substr(digits + 1);
}

absl::StatusOr<Trace> ReadDebugModeBuffer(std::string_view contents, std::string_view path) {
  if (Trim(contents).empty()) {
    return absl::InvalidArgumentError(Cat(path, ": empty trace"));
  }
  Trace trace;
  trace.path = std::string(path);
  trace.source = TraceSource::kDebugMode;
  trace.header.producer = "torchtitan activation log";
  std::optional<uint64_t> declared_total;
  std::optional<Block> block;
  uint64_t seq = 0;
  uint64_t line_no = 0;
  for (std::string_view line : Split(contents, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view trimmed = Trim(line);
    if (trimmed.empty()) continue;
    const bool indented = IsSpace((line[0]));
    if (!indented && trimmed.front() == '[') {
      if (trimmed.back() != ']' || trimmed.size() < 3) {
        return LineError(path, line_no, "block header must be \"[module/op_N_name]\"");
      }
      if (block) AppendKernel(*block, seq++, &trace);
      block.emplace();
      block->line = line_no;
      block->key = trimmed.substr(1, trimmed.size() - 2);
      continue;
    }
    if (!indented) {
      if (!block) {  // the preamble
        std::string_view rest = trimmed;
        uint64_t total;
        if (ConsumePrefix(&rest, "Total captured activations:") &&
            ParseUint(Trim(rest), &total)) {
          declared_total = total;
        }
        continue;
      }
      if (trimmed.find_first_not_of('=') == std::string_view::npos) continue;
      return LineError(path, line_no,
                       "expected a \"[module/op_N_name]\" block header or an indented "
                       "\"Key: value\" line");
    }
    if (!block) return LineError(path, line_no, "a \"Key: value\" line outside any [block]");
    size_t colon = trimmed.find(':');
    if (colon == std::string_view::npos) {
      return LineError(path, line_no, "expected \"Key: value\"");
    }
    absl::Status s = ApplyStat(Trim(trimmed.substr(0, colon)),
                               Trim(trimmed.substr(colon + 1)), &*block);
    if (!s.ok()) return LineError(path, line_no, Message(s));
  }
  if (block) AppendKernel(*block, seq++, &trace);
  if (trace.kernels.empty()) {
    return absl::InvalidArgumentError(Cat(path, ": no [module/op_N_name] blocks: not an activation log"));
  }
  trace.truncated = declared_total && *declared_total > trace.kernels.size();
  trace.label = std::string(FileStem(path));
  trace.rank = RankFromFileName(path).value_or(0);
  return trace;
}

absl::StatusOr<Trace> ReadDebugModeLog(const std::string& path) {
  absl::StatusOr<FileContents> contents = FileContents::Load(path);
  if (!contents.ok()) return contents.status();
  return ReadDebugModeBuffer(contents->view(), path);
}

}  // namespace numtrace::analyzer
