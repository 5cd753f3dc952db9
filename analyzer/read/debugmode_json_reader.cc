#include "analyzer/read/debugmode_json_reader.h"

#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/read/debugmode_common.h"
#include "analyzer/read/text_util.h"
#include "common/text/trim.h"
#include "simdjson.h"

namespace numtrace::analyzer {
namespace {

namespace dom = simdjson::dom;

constexpr std::string_view kFormat = "torch.utils._debug_mode.DebugMode.logs";
constexpr int64_t kVersion = 1;
constexpr uint8_t kReprDigits = 17;  // Python's repr of a double round-trips

const SkipCounter& kWithoutValues = kDebugModeJsonSkips[0];
const SkipCounter& kUnknownType = kDebugModeJsonSkips[1];
const SkipCounter& kBadRecord = kDebugModeJsonSkips[2];

// One tensor's value as the hash functions logged it; a position holding no
// tensor (None, a scalar argument) has neither.
struct Value {
  std::optional<double> norm;
  std::optional<uint64_t> hash;  // torch.hash_tensor
  bool tensor() const { return norm || hash; }
};

// A tensor as its text shows it: "t: f32[2, 3]".
struct TensorText {
  DType dtype = DType::kRaw;
  uint64_t numel = 0;
};

DType AbbrDType(std::string_view s) {
  struct Entry { std::string_view name; DType t; };
  static constexpr Entry kMap[] = {
      {"f32", DType::kF32},  {"f64", DType::kF64},  {"f16", DType::kF16}, {"bf16", DType::kBF16},
      {"i64", DType::kI64},  {"i32", DType::kI32},  {"i16", DType::kI16}, {"i8", DType::kI8},
      {"u8", DType::kU8},    {"b8", DType::kBool},  {"f8e4m3fn", DType::kF8E4M3},
      {"f8e5m2", DType::kF8E5M2}};
  for (const Entry& e : kMap) {
    if (e.name == s) return e.t;
  }
  return DType::kRaw;
}

// Every "t: <dtype>[d0, d1]" of a rendered argument list, in order.
void TensorsIn(std::string_view text, std::vector<TensorText>* out) {
  size_t at = 0;
  while ((at = text.find("t: ", at)) != std::string_view::npos) {
    const bool starts = at == 0 || !(IsDigit(text[at - 1]) || std::isalpha(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    at += 3;
    if (!starts) continue;
    const size_t open = text.find('[', at);
    const size_t close = open == std::string_view::npos ? open : text.find(']', open);
    if (close == std::string_view::npos) return;
    const std::string_view dtype = text.substr(at, open - at);
    if (dtype.empty() || dtype.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string_view::npos) {
      continue;
    }
    TensorText t{AbbrDType(dtype), 1};
    std::string_view dims = text.substr(open + 1, close - open - 1);
    while (!dims.empty()) {
      const size_t comma = dims.find(',');
      uint64_t d = 0;
      if (ParseUint(Trim(dims.substr(0, comma)), &d)) {
        t.numel = d != 0 && t.numel > std::numeric_limits<uint64_t>::max() / d ? std::numeric_limits<uint64_t>::max()
                                                                                : t.numel * d;
      }
      if (comma == std::string_view::npos) break;
      dims.remove_prefix(comma + 1);
    }
    out->push_back(t);
    at = close + 1;
  }
}

// A serialized value {"type": ..., "value" | "items": ...} flattened into the
// values of its tensors, in tree order. A pair of one float and one integer
// is one tensor's (norm, hash_tensor) under hash_fn=["norm", "hash_tensor"].
class ValueTree {
 public:
  // false: not a serialized value.
  bool Flatten(dom::element v, std::vector<Value>* out) {
    dom::object o;
    if (v.get_object().get(o)) return false;
    std::string_view type;
    if (o["type"].get_string().get(type)) return false;
    if (type == "scalar" || type == "nonfinite_float") {
      Value leaf;
      if (!Leaf(o, type, &leaf)) return false;
      out->push_back(leaf);
      return true;
    }
    dom::array items;
    if (o["items"].get_array().get(items)) return false;
    if (type == "dict") {
      for (dom::element pair : items) {
        dom::array kv;
        if (pair.get_array().get(kv) || kv.size() != 2 || !Flatten(kv.at(1).value_unsafe(), out)) return false;
      }
      return true;
    }
    if (type != "tuple" && type != "list") return false;
    if (Value pair; items.size() == 2 && Pair(items, &pair)) {
      out->push_back(pair);
      return true;
    }
    for (dom::element item : items) {
      if (!Flatten(item, out)) return false;
    }
    return true;
  }

 private:
  // A scalar: a float is a norm, an integer a hash_tensor, anything else no tensor.
  static bool Leaf(dom::object o, std::string_view type, Value* leaf) {
    dom::element value;
    if (o["value"].get(value)) return false;
    if (type == "nonfinite_float") {
      std::string_view s;
      if (value.get_string().get(s)) return false;
      leaf->norm = s == "nan" ? std::numeric_limits<double>::quiet_NaN()
                   : s == "-inf" ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity();
      return true;
    }
    switch (value.type()) {
      case dom::element_type::DOUBLE: leaf->norm = value.get_double().value_unsafe(); break;
      case dom::element_type::UINT64: leaf->hash = value.get_uint64().value_unsafe(); break;
      case dom::element_type::INT64:
        leaf->hash = static_cast<uint64_t>(value.get_int64().value_unsafe());
        break;
      default: break;  // None, a bool, a string: no tensor
    }
    return true;
  }

  static bool Pair(dom::array items, Value* pair) {
    Value a, b;
    for (auto [i, out] : {std::pair{size_t{0}, &a}, std::pair{size_t{1}, &b}}) {
      dom::object o;
      std::string_view type;
      if (items.at(i).get_object().get(o) || o["type"].get_string().get(type)) return false;
      if ((type != "scalar" && type != "nonfinite_float") || !Leaf(o, type, out)) return false;
    }
    if (a.norm && b.hash) *pair = {a.norm, b.hash};
    else if (a.hash && b.norm) *pair = {b.norm, a.hash};
    else return false;
    return true;
  }
};

class JsonLogReader {
 public:
  explicit JsonLogReader(Trace* trace) : trace_(trace) {}

  // One record; false: a bad record (counted by the caller).
  bool Record(dom::object r, uint64_t index) {
    std::string_view type;
    int64_t depth = 0;
    if (r["type"].get_string().get(type) || r["call_depth"].get_int64().get(depth)) return false;
    while (!modules_.empty() && modules_.back().depth >= depth) modules_.pop_back();
    if (type == "annotate") {
      std::string_view header, tag;
      if (r["header"].get_string().get(header) || r["tag"].get_string().get(tag)) return false;
      if (header.starts_with("nn.Mod")) {
        modules_.push_back({depth, std::string(tag), Phase::kForward});
      } else if (header == "record function" && tag.starts_with("Optimizer.step")) {
        // The optimizer's step: its ops are the optimizer phase, in no module.
        modules_.push_back({depth, std::string(), Phase::kOptimizer});
      } else {
        CountSkipped(trace_, kWithoutValues, index);
      }
      return true;
    }
    if (type == "op") return Op(r);
    if (type == "triton_kernel") return Triton(r);
    if (type == "redistribute" || type == "output_placement") {
      CountSkipped(trace_, kWithoutValues, index);
      return true;
    }
    CountSkipped(trace_, kUnknownType, index);
    return true;
  }

 private:
  // The innermost module entered ("" when none).
  std::string_view Module() const {
    for (auto it = modules_.rbegin(); it != modules_.rend(); ++it) {
      if (!it->fqn.empty()) return it->fqn;
    }
    return {};
  }

  // `hash` and `input_hash` of an op's log (absent: no tensors hashed).
  bool Hashes(dom::object r, std::vector<Value>* out, std::vector<Value>* in) {
    dom::element log;
    if (r["log"].get(log)) return true;
    if (log.is_null()) return true;
    dom::object o;
    dom::array items;
    if (log.get_object().get(o) || o["items"].get_array().get(items)) return false;
    for (dom::element pair : items) {
      dom::array kv;
      std::string_view key;
      if (pair.get_array().get(kv) || kv.size() != 2 || kv.at(0).get_string().get(key)) return false;
      std::vector<Value>* into = key == "hash" ? out : key == "input_hash" ? in : nullptr;
      if (into != nullptr && !tree_.Flatten(kv.at(1).value_unsafe(), into)) return false;
    }
    return true;
  }

  static void AddBuffer(DebugModeRecord* rec, const Value& v, uint32_t arg, Role role, const TensorText* t) {
    // Outputs are at their record's addr; inputs are linked by hash.
    Buffer b = LoggedBuffer(arg, role, t != nullptr ? t->dtype : DType::kRaw, t != nullptr ? t->numel : 0,
                            role == Role::kIn ? 0 : rec->OutputAddr(),
                            (v.norm ? kPrintedStats : 0) | (v.hash ? kHashTensor : 0));
    PrintedStats p;
    p.digits = kReprDigits;
    if (v.norm) {
      p.l1 = *v.norm;
      p.has = PrintedStats::kL1;
      b.stats.l1 = *v.norm;
      if (std::isnan(*v.norm)) b.stats.nan = 1;
      else if (std::isinf(*v.norm)) b.stats.inf = 1;
    }
    b.stats.hash = v.hash ? *v.hash : std::bit_cast<uint64_t>(*v.norm);
    rec->Add(b, p);
  }

  static void AddValues(DebugModeRecord* rec, const std::vector<Value>& values, const std::vector<TensorText>& texts,
                        Role role) {
    size_t tensor = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].tensor()) continue;
      AddBuffer(rec, values[i], static_cast<uint32_t>(i), role, tensor < texts.size() ? &texts[tensor] : nullptr);
      ++tensor;
    }
  }

  // Where the record is: the innermost module entered, the phase of the
  // region it is in.
  DebugModeOrigin Origin(std::string_view op) const {
    DebugModeOrigin o;
    if (!Module().empty()) o.scope = WithoutRootClass(Module());
    if (!modules_.empty()) o.phase = modules_.back().phase;
    o.op = op;
    return o;
  }

  bool Op(dom::object r) {
    std::string_view op_name, args, kwargs, output;
    if (r["op_name"].get_string().get(op_name) || r["args_str"].get_string().get(args)) return false;
    if (r["kwargs_str"].get_string().get(kwargs)) kwargs = {};
    if (r["output_str"].get_string().get(output)) output = {};
    std::vector<Value> out, in;
    if (!Hashes(r, &out, &in)) return false;
    const std::string_view module = Module();
    DebugModeRecord rec(
        trace_, RecordLevel::kOp,
        trace_->strings.Intern(CapUtf8(Cat(module.empty() ? "<none>" : WithoutRootClass(module), "/", op_name))),
        trace_->strings.Intern(CapUtf8(op_name)));
    texts_.clear();
    TensorsIn(output, &texts_);
    AddValues(&rec, out, texts_, Role::kOut);
    texts_.clear();
    TensorsIn(args, &texts_);
    TensorsIn(kwargs, &texts_);
    AddValues(&rec, in, texts_, Role::kIn);
    // "aten::sum.dim_IntList" -> "aten::sum", the op as provenance names it.
    const size_t dot = op_name.find('.', op_name.find("::") == std::string_view::npos ? 0 : op_name.find("::"));
    rec.Push(Origin(op_name.substr(0, dot)));
    return true;
  }

  // pre_hashes / post_hashes: {"type": "dict", "items": [[name, value], ...]}.
  bool NamedValues(dom::object r, std::string_view field, std::vector<std::pair<std::string_view, Value>>* out) {
    dom::element d;
    if (r[field].get(d) || d.is_null()) return true;
    dom::object o;
    dom::array items;
    if (d.get_object().get(o) || o["items"].get_array().get(items)) return false;
    for (dom::element pair : items) {
      dom::array kv;
      std::string_view name;
      std::vector<Value> v;
      if (pair.get_array().get(kv) || kv.size() != 2 || kv.at(0).get_string().get(name) ||
          !tree_.Flatten(kv.at(1).value_unsafe(), &v) || v.size() != 1) {
        return false;
      }
      out->emplace_back(name, v[0]);
    }
    return true;
  }

  bool Triton(dom::object r) {
    std::string_view name, kwargs;
    if (r["kernel_name"].get_string().get(name)) return false;
    if (r["kwargs_str"].get_string().get(kwargs)) kwargs = {};
    std::vector<std::pair<std::string_view, Value>> pre, post;
    if (!NamedValues(r, "pre_hashes", &pre) || !NamedValues(r, "post_hashes", &post)) return false;
    const StringId id = trace_->strings.Intern(CapUtf8(name));
    DebugModeRecord rec(trace_, RecordLevel::kKernel, id, id);
    // The tensors of "in_ptr0=t: f32[8], out_ptr0=t: f32[8], xnumel=8" by
    // argument name: split at the commas outside brackets.
    texts_.clear();
    std::vector<std::string_view> names;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= kwargs.size(); ++i) {
      const char c = i < kwargs.size() ? kwargs[i] : ',';
      if (c == '[' || c == '(') ++depth;
      if (c == ']' || c == ')') --depth;
      if (c != ',' || depth > 0) continue;
      const std::string_view piece = kwargs.substr(start, i - start);
      start = i + 1;
      const size_t eq = piece.find('=');
      const size_t before = texts_.size();
      if (eq != std::string_view::npos) TensorsIn(piece.substr(eq + 1), &texts_);
      if (texts_.size() == before + 1) names.push_back(Trim(piece.substr(0, eq)));
      else texts_.resize(before);
    }
    auto text_of = [&](std::string_view arg) -> const TensorText* {
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == arg) return &texts_[i];
      }
      return nullptr;
    };
    for (size_t i = 0; i < post.size(); ++i) {
      const auto& [arg, after] = post[i];
      const Value* before = nullptr;
      for (const auto& [pre_arg, v] : pre) {
        if (pre_arg == arg) before = &v;
      }
      // Unchanged by the launch: only read. Changed: written (what it held
      // before, an output buffer's old contents, is not an input).
      const bool written = before == nullptr || before->norm != after.norm || before->hash != after.hash;
      AddBuffer(&rec, after, static_cast<uint32_t>(i), written ? Role::kOut : Role::kIn, text_of(arg));
    }
    rec.Push(Origin({}));
    return true;
  }

  Trace* trace_;
  ValueTree tree_;
  // The regions entered and not yet left, by call depth: modules (forward)
  // and the optimizer's step.
  struct Region {
    int64_t depth;
    std::string fqn;  // "" for the optimizer step
    Phase phase;
  };
  std::vector<Region> modules_;
  std::vector<TensorText> texts_;
};

}  // namespace

bool SniffDebugModeJson(std::string_view head) {
  if (head[0] != '{') return false;
  size_t at = head.find("\"format\"");
  if (at == std::string_view::npos) return false;
  std::string_view rest = TrimLeft(head.substr(at + 8));
  if (!ConsumePrefix(&rest, ":")) return false;
  rest = TrimLeft(rest);
  return rest.starts_with(Cat("\"", kFormat, "\""));
}

absl::StatusOr<Trace> ReadDebugModeJson(LineReader& reader) {
  const std::string_view path = reader.path();
  std::string text;
  if (absl::Status s = reader.ReadRest(&text); !s.ok()) return s;
  Trace trace = StartDebugModeTrace(path, "torch DebugMode");

  dom::parser parser;
  dom::element root;
  if (auto e = parser.parse(text).get(root)) {
    if (e == simdjson::MEMALLOC) throw std::bad_alloc();
    return absl::InvalidArgumentError(
        Cat(path, ": not a complete DebugMode JSON log (", simdjson::error_message(e), "; cut short?)"));
  }
  dom::object top;
  std::string_view format;
  if (root.get_object().get(top) || top["format"].get_string().get(format) || format != kFormat) {
    return absl::InvalidArgumentError(Cat(path, ": \"format\" is not \"", kFormat, "\""));
  }
  int64_t version = 0;
  if (top["version"].get_int64().get(version) || version != kVersion) {
    std::string shown = "missing";
    if (dom::element v; !top["version"].get(v)) shown = OneLine(simdjson::minify(v), 40);
    return absl::InvalidArgumentError(Cat(path, ": DebugMode JSON log version ", shown,
                                          ": this numtrace reads version ", kVersion));
  }
  dom::array logs;
  if (top["logs"].get_array().get(logs)) {
    return absl::InvalidArgumentError(Cat(path, ": no \"logs\" list"));
  }
  ReserveDebugModeTrace(&trace, logs.size(), logs.size() * 3);
  JsonLogReader records(&trace);
  uint64_t index = 0;
  for (dom::element r : logs) {
    dom::object o;
    const size_t kernels = trace.kernels.size(), buffers = trace.buffers.size();
    if (r.get_object().get(o) || !records.Record(o, index)) {
      // Keep nothing of a bad record.
      trace.kernels.resize(kernels);
      trace.buffers.resize(buffers);
      trace.printed.resize(buffers);
      if (trace.provenance.size() > kernels) trace.provenance.resize(kernels);
      CountSkipped(&trace, kBadRecord, index);
    }
    ++index;
  }
  FinishDebugModeTrace(&trace);
  return trace;
}

}  // namespace numtrace::analyzer
