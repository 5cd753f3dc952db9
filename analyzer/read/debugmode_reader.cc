#include "analyzer/read/debugmode_reader.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/read/debugmode_common.h"
#include "analyzer/read/debugmode_log_line.h"
#include "analyzer/read/line_reader.h"
#include "analyzer/read/text_util.h"
#include "common/text/trim.h"

namespace numtrace::analyzer {
namespace {

// One `[key]` block as written, before it becomes a Kernel.
// Reused from block to block (cleared, capacity kept): lines are streamed,
// so the block owns copies of the strings it keeps.
struct Block {
  uint64_t line = 0;
  std::string key;
  std::vector<uint64_t> numel;  // one per parsed shape
  std::vector<DType> dtypes;
  std::vector<double> l1, l2, min, max, mean, out_hash;
  std::vector<std::optional<double>> in_hashes;
  std::vector<std::string> in_producers;  // keys, positional with in_hashes ("" when none)
  std::string location;                   // "common/attention.py:534": provenance src
  uint32_t keys_seen = 0;     // DebugModeStat bits
  bool blank_after = false;   // a blank line followed its last line
  Phase phase = Phase::kForward;  // the tracer writes "Phase:" only when not forward

  void Reset(uint64_t at, std::string_view k) {
    line = at;
    key.assign(k);
    numel.clear();
    dtypes.clear();
    l1.clear(); l2.clear(); min.clear(); max.clear(); mean.clear(); out_hash.clear();
    in_hashes.clear();
    in_producers.clear();
    location.clear();
    keys_seen = 0;
    blank_after = false;
    phase = Phase::kForward;
  }
};

// The keys that make a full block's statistics, and those a hash-only block
// (an in-place op, a tensor below the tracer's min_numel) is made of.
constexpr uint32_t kStatKeys = kStatShape | kStatL1 | kStatL2 | kStatMin | kStatMax | kStatMean;
constexpr uint32_t kHashKeys = kStatOutputHash | kStatInputHashes;

enum class NumberResult { kOk, kNotANumber, kOutOfRange };

// A whole token as a double; "nan", "inf", "-inf" included. A finite
// spelling beyond double's range (1e999) is out of range, not infinity:
// the tracer never writes one.
// The tracer writes "%.6e" ("-3.000000e+00") and repr() of doubles: most are
// a mantissa below 2^53 and a small power of ten, both exact doubles, so one
// multiplication or division rounds correctly (Clinger's fast path). Several
// times faster than from_chars, which takes everything else.
bool FastDouble(std::string_view s, double* out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* p = s.data();
  const char* const end = p + s.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  auto digit = [](char c) { return static_cast<unsigned>(c - '0'); };
  // Digits before and after the point, into one mantissa. More than 19
  // digits in all (leading zeros counted: "0.000..." with 17 significant
  // ones) may overflow a uint64 and is left to from_chars.
  uint64_t mantissa = 0;
  const char* const first = p;
  for (; p < end && digit(*p) < 10; ++p) mantissa = mantissa * 10 + digit(*p);
  size_t digits = static_cast<size_t>(p - first);
  int exp10 = 0;
  if (p < end && *p == '.') {
    const char* const frac = ++p;
    for (; p < end && digit(*p) < 10; ++p) mantissa = mantissa * 10 + digit(*p);
    digits += static_cast<size_t>(p - frac);
    exp10 = -static_cast<int>(p - frac);
  }
  if (digits == 0 || digits > 19) return false;
  if (mantissa > (uint64_t{1} << 53)) return false;  // not exact as a double
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exp_negative = false;
    if (p < end && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
    int e = 0;
    const char* const exp_first = p;
    for (; p < end && digit(*p) < 10 && e < 1000; ++p) e = e * 10 + static_cast<int>(digit(*p));
    if (p == exp_first) return false;
    exp10 += exp_negative ? -e : e;
  }
  if (p != end || exp10 < -22 || exp10 > 22) return false;
  double v = static_cast<double>(mantissa);  // exact: below 2^53
  v = exp10 < 0 ? v / kPow10[-exp10] : v * kPow10[exp10];
  *out = negative ? -v : v;
  return true;
}

NumberResult ParseDouble(std::string_view s, double* out) {
  s = Trim(s);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return NumberResult::kNotANumber;
  if (FastDouble(s, out)) return NumberResult::kOk;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (r.ptr != s.data() + s.size()) return NumberResult::kNotANumber;
  if (r.ec == std::errc::result_out_of_range) return NumberResult::kOutOfRange;
  return r.ec == std::errc() ? NumberResult::kOk : NumberResult::kNotANumber;
}

// Calls f(token) for each comma-separated piece, without allocating.
template <typename F>
void ForEachToken(std::string_view value, F&& f) {
  while (true) {
    size_t comma = value.find(',');
    f(value.substr(0, comma));
    if (comma == std::string_view::npos) return;
    value.remove_prefix(comma + 1);
  }
}

// "1.0, 2.5" -> {1.0, 2.5}; brackets of a printed list are ignored.
absl::Status ParseNumbers(std::string_view field, std::string_view value, std::vector<double>* out) {
  value = Trim(value);
  if (ConsumePrefix(&value, "[") || ConsumePrefix(&value, "(")) {
    if (!value.empty()) value.remove_suffix(1);
  }
  absl::Status status;
  ForEachToken(value, [&](std::string_view token) {
    if (!status.ok()) return;
    double v;
    switch (ParseDouble(token, &v)) {
      case NumberResult::kOk: out->push_back(v); return;
      case NumberResult::kOutOfRange:
        status = absl::InvalidArgumentError(
            Cat(field, ": number out of range (beyond a double): \"", OneLine(Trim(token), 40), "\""));
        return;
      case NumberResult::kNotANumber:
        status = absl::InvalidArgumentError(
            Cat(field, ": not a number: \"", OneLine(Trim(token), 40), "\""));
        return;
    }
  });
  return status;
}

// Input hashes may hold "None" for inputs that are not tensors.
void ParseOptionalNumbers(std::string_view value, std::vector<std::optional<double>>* out) {
  ForEachToken(value, [&](std::string_view token) {
    double v;
    if (ParseDouble(token, &v) == NumberResult::kOk) out->push_back(v);
    else out->push_back(std::nullopt);
  });
}

// Every innermost "[d0, d1, ...]" is one shape: handles "torch.Size([2, 3])"
// as well as tuple outputs "(torch.Size([2]), torch.Size([]))".
absl::Status ParseShapes(std::string_view value, std::vector<uint64_t>* numel) {
  const size_t before = numel->size();
  const char* p = value.data();
  const char* const end = p + value.size();
  while (p < end) {
    const char* open = static_cast<const char*>(std::memchr(p, '[', static_cast<size_t>(end - p)));
    if (open == nullptr) break;
    // "[d0, d1, ...]": digits, commas and blanks only, else not a shape.
    uint64_t n = 1, d = 0;
    bool in_number = false, overflow = false;
    const char* q = open + 1;
    for (; q < end; ++q) {
      const char c = *q;
      if (IsDigit(c)) {
        const uint64_t digit = static_cast<uint64_t>(c - '0');
        overflow |= d > (UINT64_MAX - digit) / 10;
        d = d * 10 + digit;
        in_number = true;
      } else if (c == ',' || c == ' ' || c == ']') {
        if (in_number) n = (d != 0 && n > UINT64_MAX / d) ? UINT64_MAX : n * d;
        d = 0;
        in_number = false;
        if (c == ']') break;
      } else {
        break;
      }
    }
    if (q < end && *q == ']') {
      if (overflow) {
        return absl::InvalidArgumentError(Cat("Shape: dimension out of range in \"",
                                              OneLine(std::string_view(open, static_cast<size_t>(q - open + 1)), 60), "\""));
      }
      numel->push_back(n);
      p = q + 1;
    } else {
      p = open + 1;
    }
  }
  if (numel->size() == before) {
    return absl::InvalidArgumentError(Cat("Shape: no [dims] in \"", OneLine(value, 60), "\""));
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

PrintedStats Printed(const Block& b, size_t i) {
  PrintedStats l;
  auto take = [i, &l](const std::vector<double>& v, double* out, uint8_t bit) {
    if (i < v.size()) {
      *out = v[i];
      l.has |= bit;
    }
  };
  take(b.out_hash, &l.l1, PrintedStats::kL1);
  if (!(l.has & PrintedStats::kL1)) take(b.l1, &l.l1, PrintedStats::kL1);
  take(b.l2, &l.l2, PrintedStats::kL2);
  take(b.min, &l.min, PrintedStats::kMin);
  take(b.max, &l.max, PrintedStats::kMax);
  take(b.mean, &l.mean, PrintedStats::kMean);
  return l;
}

// kernel_of_name: by StringId of a block's key, its kernel index (keys are
// unique in a log); producers are looked up there.
void AppendKernel(const Block& b, std::vector<uint32_t>* kernel_of_name, Trace* trace) {
  const StringId name = trace->strings.Intern(b.key);
  if (kernel_of_name->size() <= name) kernel_of_name->resize(name + 1, UINT32_MAX);
  (*kernel_of_name)[name] = static_cast<uint32_t>(trace->kernels.size());
  DebugModeRecord rec(trace, RecordLevel::kOp, name, trace->strings.Intern(DebugModeOpName(b.key)));
  // A hash-only block has exactly the outputs it has hashes for (none for
  // an in-place op that returned nothing); a full block at least one.
  const bool hash_only = !(b.keys_seen & kStatShape);
  size_t outputs = hash_only ? b.out_hash.size() : std::max<size_t>({b.out_hash.size(), b.numel.size(), size_t{1}});
  for (size_t i = 0; i < outputs; ++i) {
    const DType dtype = i < b.dtypes.size() ? b.dtypes[i] : b.dtypes.empty() ? DType::kRaw : b.dtypes[0];
    const uint64_t n = i < b.numel.size() ? b.numel[i] : 0;
    Buffer buf = LoggedBuffer(static_cast<uint32_t>(i), Role::kOut, dtype, n, rec.OutputAddr(), kPrintedStats);
    buf.stats = OutputStats(b, i, n);
    rec.Add(buf, Printed(b, i));
  }
  // An input is at its logged producer's addr (0: no producer logged; its
  // hash links it), so data_flow.h follows the log's own producer links.
  for (size_t i = 0; i < b.in_hashes.size(); ++i) {
    if (!b.in_hashes[i]) continue;
    uint64_t producer = 0;
    if (i < b.in_producers.size() && !b.in_producers[i].empty()) {
      const std::optional<StringId> id = trace->strings.Find(b.in_producers[i]);
      if (id && *id < kernel_of_name->size() && (*kernel_of_name)[*id] != UINT32_MAX) {
        producer = uint64_t{(*kernel_of_name)[*id]} + 1;
      }
    }
    Buffer buf = LoggedBuffer(static_cast<uint32_t>(i), Role::kIn, DType::kRaw, 0, producer, kPrintedStats);
    buf.stats.l1 = *b.in_hashes[i];
    buf.stats.hash = std::bit_cast<uint64_t>(*b.in_hashes[i]);
    PrintedStats l;
    l.l1 = *b.in_hashes[i];
    l.has = PrintedStats::kL1;
    rec.Add(buf, l);
  }
  const DebugModeProvenance dm = DebugModeProvenanceOf(b.key);
  rec.Push({.scope = dm.scope, .op = dm.op, .phase = b.phase, .src = b.location});
}

void AddDtypes(std::string_view list, std::vector<DType>* out) {
  // "torch.bfloat16", "(torch.float32, torch.int64)", "[a, b]"
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == ',' || c == '(' || c == ')' || c == '[' || c == ']') {
      std::string_view piece = Trim(list.substr(start, i - start));
      if (!piece.empty()) out->push_back(TorchDType(piece));
      start = i + 1;
    }
  }
}

// Applies one "Key: value" line to the block.
absl::Status ApplyStat(const DebugModeLogLine& line, Block* b) {
  const std::string_view key_text = line.key;
  std::string_view value = line.value;
  b->keys_seen |= line.stat;
  switch (line.stat) {
    case kStatShape: {
      // The tracer writes "Shape: torch.Size([..]), Dtype: torch.bfloat16".
      size_t dt = value.find("Dtype:");
      if (dt != std::string_view::npos) {
        b->keys_seen |= kStatDtype;
        AddDtypes(value.substr(dt + 6), &b->dtypes);
        value = value.substr(0, dt);
      }
      return ParseShapes(value, &b->numel);
    }
    case kStatDtype: AddDtypes(value, &b->dtypes); return absl::OkStatus();
    case kStatL1: return ParseNumbers(key_text, value, &b->l1);
    case kStatL2: return ParseNumbers(key_text, value, &b->l2);
    case kStatMin: return ParseNumbers(key_text, value, &b->min);
    case kStatMax: return ParseNumbers(key_text, value, &b->max);
    case kStatMean: return ParseNumbers(key_text, value, &b->mean);
    case kStatOutputHash:
      if (Trim(value).empty()) return absl::OkStatus();  // in-place op
      return ParseNumbers(key_text, value, &b->out_hash);
    case kStatInputHashes: ParseOptionalNumbers(value, &b->in_hashes); return absl::OkStatus();
    case kStatInputProducers: {
      // "key;key;;" positional with the input hashes (';': keys hold commas
      // never, but the hash list does).
      while (true) {
        const size_t semi = value.find(';');
        b->in_producers.emplace_back(Trim(value.substr(0, semi)));
        if (semi == std::string_view::npos) break;
        value.remove_prefix(semi + 1);
      }
      return absl::OkStatus();
    }
    case kStatPhase:
      // "backward" (the tracer omits forward); anything else is not a phase we know.
      if (!ParsePhase(Trim(value), &b->phase)) b->phase = Phase::kOther;
      return absl::OkStatus();
    case kStatLocation: b->location.assign(value); return absl::OkStatus();
    default: return absl::OkStatus();  // later additions
  }
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

DebugModeProvenance DebugModeProvenanceOf(std::string_view key) {
  DebugModeProvenance out;
  const std::string_view op = DebugModeOpName(key);
  if (op.size() != key.size()) {
    // The tracer writes the schema name without its namespace ("mm" for
    // aten::mm); a name that already has one is kept.
    out.op = op.find("::") == std::string_view::npos ? Cat("aten::", op) : std::string(op);
  }
  const size_t slash = key.rfind("/op_");
  if (slash == std::string_view::npos || op.size() == key.size()) return out;
  std::string_view fqn = key.substr(0, slash);
  if (fqn == "<none>" || fqn.empty()) return out;
  out.scope = WithoutRootClass(fqn);
  return out;
}

namespace {

// What a complete block looks like in this log, learnt from the blocks
// before the last one: the keys every one of them had, and whether each was
// followed by a blank line (the tracer's style). Full blocks and hash-only
// blocks are learnt apart: a hash-only block lacks the statistics by design,
// not because it was cut.
class BlockStyle {
 public:
  void Learn(const Block& b) {
    ++blocks_;
    if (b.keys_seen & kStatShape) keys_of_full_ &= b.keys_seen;
    else keys_of_hash_only_ &= b.keys_seen;
    all_blank_after_ &= b.blank_after;
  }

  // Whether the last block of a log is whole, though the log may have been
  // cut inside it: in the middle of one of its lines (`cut_in_block`),
  // before the blank line every earlier block had, or before a key every
  // earlier block of its form had. A lone block is judged by what the
  // tracer always writes. A block with no statistic and no hash is cut
  // whatever came before.
  bool Complete(const Block& b, bool cut_in_block) const {
    // What the tracer always writes: Location for both forms.
    constexpr uint32_t kTracerKeys =
        kStatShape | kStatL2 | kStatMin | kStatMax | kStatMean | kStatOutputHash | kStatLocation;
    const bool full = b.keys_seen & kStatShape;
    const uint32_t keys_of_all = full ? keys_of_full_ : keys_of_hash_only_;
    const bool learnt = blocks_ > 0 && keys_of_all != ~0u;
    const bool has_content = full ? (b.keys_seen & kStatKeys) != 0 : (b.keys_seen & kHashKeys) != 0;
    const bool blank_ok = blocks_ > 0 && all_blank_after_ ? b.blank_after : true;
    if (cut_in_block || !has_content || !blank_ok) return false;
    if (b.blank_after) return true;
    return learnt ? (b.keys_seen & keys_of_all) == keys_of_all
                  : full ? (b.keys_seen & kTracerKeys) == kTracerKeys : (b.keys_seen & kStatLocation) != 0;
  }

 private:
  uint64_t blocks_ = 0;
  uint32_t keys_of_full_ = ~0u, keys_of_hash_only_ = ~0u;
  bool all_blank_after_ = true;
};

// The block parser: tokenized lines in, the trace out. Knows where it stands
// (preamble, inside a block) and so what each line means there.
class BlockParser {
 public:
  BlockParser(Trace* trace, std::string_view path) : trace_(trace), path_(path) {}

  absl::Status Line(const DebugModeLogLine& line, uint64_t number) {
    using L = DebugModeLogLine;
    if (line.kind != L::kBlank) any_text_ = true;
    switch (line.kind) {
      case L::kBlank:
        if (in_block_) block_.blank_after = true;
        return absl::OkStatus();
      case L::kBadHeader: return LineError(path_, number, "block header must be \"[module/op_N_name]\"");
      case L::kHeader:
        if (in_block_) FinishBlock();
        block_.Reset(number, line.key);
        in_block_ = true;
        return absl::OkStatus();
      case L::kStat:
        if (!in_block_) return OutsideBlock(number);
        block_.blank_after = false;
        if (absl::Status s = ApplyStat(line, &block_); !s.ok()) return LineError(path_, number, Message(s));
        return absl::OkStatus();
      case L::kIndentedText:
        if (!in_block_) return OutsideBlock(number);
        return LineError(path_, number, "expected \"Key: value\"");
      case L::kRule:
        return absl::OkStatus();  // the preamble's end; also accepted between blocks
      case L::kTotal:
      case L::kExcluded:
      case L::kText:
        if (in_block_) {
          return LineError(path_, number,
                           "expected a \"[module/op_N_name]\" block header or an indented "
                           "\"Key: value\" line");
        }
        // The preamble; lines it has that this reader does not know are skipped.
        saw_preamble_ |= line.kind != L::kText;
        if (line.total) declared_total_ = line.total;
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  // After the last line. `cut_mid_line`: the log ended inside a line (not
  // given to Line: a number cut to fewer digits parses as a wrong value);
  // `cut_in_block`: that line belonged to the open block.
  absl::Status End(bool cut_mid_line, bool cut_in_block) {
    if (!any_text_ && !cut_mid_line) return absl::InvalidArgumentError(Cat(path_, ": empty trace"));
    bool cut = cut_mid_line;
    if (in_block_) {
      if (style_.Complete(block_, cut_in_block)) FinishBlock();
      else cut = true;
    }
    // No block at all is not a log, unless the log says blocks were to come
    // (cut after its preamble) or one was cut.
    if (trace_->kernels.empty() && !cut && !(saw_preamble_ && declared_total_.value_or(0) > 0)) {
      return absl::InvalidArgumentError(Cat(path_, ": no [module/op_N_name] blocks: not an activation log"));
    }
    trace_->truncated = cut || (declared_total_ && *declared_total_ > trace_->kernels.size());
    return absl::OkStatus();
  }

 private:
  absl::Status OutsideBlock(uint64_t number) const {
    return LineError(path_, number, "a \"Key: value\" line outside any [block]");
  }

  void FinishBlock() {
    style_.Learn(block_);
    AppendKernel(block_, &kernel_of_name_, trace_);
  }

  Trace* trace_;
  std::string_view path_;
  Block block_;
  bool in_block_ = false;
  BlockStyle style_;
  std::vector<uint32_t> kernel_of_name_;  // StringId of a key -> kernel index, for producers
  std::optional<uint64_t> declared_total_;
  bool saw_preamble_ = false, any_text_ = false;
};

}  // namespace

absl::StatusOr<Trace> ReadDebugModeLines(LineReader& reader) {
  Trace trace = StartDebugModeTrace(reader.path(), "torchtitan activation log");
  trace.truncated_how = "cut short inside a block: read to its last complete block";
  // ~330 bytes and ~3 buffers per block in the tracer's shape: estimates a
  // little high, so a whole log fits without a regrowth (a copy and faults).
  ReserveDebugModeTrace(&trace, reader.size_hint() / 280, reader.size_hint() / 90);
  BlockParser parser(&trace, reader.path());
  LineReader::Line raw;
  bool cut_mid_line = false, cut_in_block = false;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&raw);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (!raw.terminated) {
      // The writer was cut short in this line: it and its block are not
      // trusted. An indented line belongs to the open block; anything else
      // (a cut "[key" header) starts the next one and leaves the open block whole.
      cut_mid_line = true;
      cut_in_block = IsSpace(raw.text[0]);
      break;
    }
    if (absl::Status s = parser.Line(TokenizeDebugModeLine(raw.text), raw.number); !s.ok()) return s;
  }
  if (absl::Status s = parser.End(cut_mid_line, cut_in_block); !s.ok()) return s;
  FinishDebugModeTrace(&trace);
  return trace;
}

}  // namespace numtrace::analyzer
