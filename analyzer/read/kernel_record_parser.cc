#include "analyzer/read/kernel_record_parser.h"

#include "analyzer/read/json_fields.h"
#include "analyzer/read/text_util.h"

namespace numtrace::analyzer {
namespace {

namespace od = simdjson::ondemand;
using json::FieldError;
using json::JsonError;

// Fetches the next field of an object loop into `f` and a pointer to its raw
// key (just after the opening quote) into `key`; see json::KeyIs.
#define NT_FIELD(item, f, key)                                                        \
  od::field f;                                                                        \
  if (auto e_ = std::move(item).get(f)) return JsonError(e_, "object", "an object"); \
  const char* const key = f.key().raw()

using json::KeyIs;

absl::Status Missing(std::string_view field) { return FieldError(field, "missing (MUST field)"); }

// The raw content of a string value (just after its opening quote).
inline absl::Status RawValue(od::value& v, std::string_view field, const char** raw) {
  od::raw_json_string s;
  if (auto e = v.get_raw_json_string().get(s)) return JsonError(e, field, "a string");
  *raw = s.raw();
  return absl::OkStatus();
}

}  // namespace

absl::Status KernelRecordParser::ParseStats(od::value& v, const char* end, BufferStats* s) {
  od::object object;
  if (auto e = v.get_object().get(object)) return JsonError(e, "stats", "an object");
  bool has_n = false, has_hash = false, has_min = false, has_max = false;
  for (auto item : object) {
    NT_FIELD(item, f, key);
    od::value& x = f.value();
    // Dispatch on the first byte, then compare whole keys (with the quote).
    switch (key[0]) {
      case 'n':
        if (KeyIs(key, "n")) {
          NT_RETURN_IF_ERROR(json::GetU64(x, "stats.n", &s->n));
          has_n = true;
        } else if (KeyIs(key, "nan")) {
          NT_RETURN_IF_ERROR(json::GetU64(x, "stats.nan", &s->nan));
        } else if (KeyIs(key, "ninf")) {
          NT_RETURN_IF_ERROR(json::GetU64(x, "stats.ninf", &s->ninf));
        }
        break;
      case 'i':
        if (KeyIs(key, "inf")) NT_RETURN_IF_ERROR(json::GetU64(x, "stats.inf", &s->inf));
        break;
      case 'z':
        if (KeyIs(key, "zero")) NT_RETURN_IF_ERROR(json::GetU64(x, "stats.zero", &s->zero));
        break;
      case 's':
        if (KeyIs(key, "sub")) NT_RETURN_IF_ERROR(json::GetU64(x, "stats.sub", &s->sub));
        else if (KeyIs(key, "sum")) NT_RETURN_IF_ERROR(json::GetDouble(x, "stats.sum", &s->sum));
        break;
      case 'm':
        if (KeyIs(key, "min")) {
          NT_RETURN_IF_ERROR(json::GetDouble(x, "stats.min", &s->min));
          has_min = true;
        } else if (KeyIs(key, "max")) {
          NT_RETURN_IF_ERROR(json::GetDouble(x, "stats.max", &s->max));
          has_max = true;
        }
        break;
      case 'l':
        if (KeyIs(key, "l1")) NT_RETURN_IF_ERROR(json::GetDouble(x, "stats.l1", &s->l1));
        else if (KeyIs(key, "l2")) NT_RETURN_IF_ERROR(json::GetDouble(x, "stats.l2", &s->l2));
        break;
      case 'h':
        if (KeyIs(key, "hash")) {
          od::raw_json_string raw;
          if (auto e = x.get_raw_json_string().get(raw)) return JsonError(e, "stats.hash", "a string");
          if (!json::ParseHash16Raw(raw.raw(), &s->hash)) {
            std::string_view h = json::RawString(raw.raw(), end);
            return FieldError("stats.hash",
                              Cat("expected 16 hex digits, got \"", h.substr(0, 40), "\""));
          }
          has_hash = true;
        }
        break;
      default:
        break;  // unknown fields are ignored (forward compatibility)
    }
  }
  if (!has_n) return Missing("stats.n");
  if (!has_hash) return Missing("stats.hash");
  s->has_range = has_min && has_max;
  if (s->nan + s->inf + s->ninf > s->n) {
    return FieldError("stats", "nan + inf + ninf exceeds n");
  }
  return absl::OkStatus();
}

absl::Status KernelRecordParser::ParseBuffer(od::object& object, const char* end, Buffer* b) {
  bool has_dtype = false, has_role = false, has_stats = false;
  const char* raw = nullptr;
  for (auto item : object) {
    NT_FIELD(item, f, key);
    od::value& x = f.value();
    if (KeyIs(key, "arg")) {
      NT_RETURN_IF_ERROR(json::GetU32(x, "arg", &b->arg));
    } else if (KeyIs(key, "addr")) {
      NT_RETURN_IF_ERROR(RawValue(x, "addr", &raw));
      if (!json::ParseHexAddressRaw(raw, &b->addr)) {
        return FieldError("addr", Cat("expected \"0x<hex>\", got \"",
                                      json::RawString(raw, end).substr(0, 40), "\""));
      }
    } else if (KeyIs(key, "offset")) {
      NT_RETURN_IF_ERROR(json::GetU64(x, "offset", &b->offset));
    } else if (KeyIs(key, "bytes")) {
      NT_RETURN_IF_ERROR(json::GetU64(x, "bytes", &b->bytes));
    } else if (KeyIs(key, "dtype")) {
      NT_RETURN_IF_ERROR(RawValue(x, "dtype", &raw));
      if (!json::ParseDTypeRaw(raw, &b->dtype)) {
        return FieldError("dtype", Cat("unknown dtype \"", json::RawString(raw, end).substr(0, 40), "\""));
      }
      has_dtype = true;
    } else if (KeyIs(key, "dtype_from")) {
      NT_RETURN_IF_ERROR(RawValue(x, "dtype_from", &raw));
      // SHOULD field: a value from a later version is not worth failing on.
      if (!json::ParseDTypeSourceRaw(raw, &b->dtype_from)) b->dtype_from = DTypeSource::kDefault;
    } else if (KeyIs(key, "role")) {
      NT_RETURN_IF_ERROR(RawValue(x, "role", &raw));
      if (!json::ParseRoleRaw(raw, &b->role)) {
        return FieldError("role", Cat("unknown role \"", json::RawString(raw, end).substr(0, 40), "\""));
      }
      has_role = true;
    } else if (KeyIs(key, "stats")) {
      NT_RETURN_IF_ERROR(ParseStats(x, end, &b->stats));
      has_stats = true;
    } else if (KeyIs(key, "shape")) {
      od::array dims;
      if (auto e = x.get_array().get(dims)) return JsonError(e, "shape", "an array of integers");
      std::string text = "[";
      for (auto d : dims) {
        int64_t n = 0;
        od::value dv;
        if (auto e = std::move(d).get(dv)) return JsonError(e, "shape", "an array of integers");
        NT_RETURN_IF_ERROR(json::GetI64(dv, "shape[]", &n));
        if (text.size() > 1) text += ',';
        text += std::to_string(n);
        if (text.size() > 256) return FieldError("shape", "more dimensions than a tensor has");
      }
      b->shape = trace_->strings.Intern(text + "]");
    } else if (KeyIs(key, "device")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "device", &s));
      b->device = trace_->strings.Intern(CapUtf8(s));
    } else if (KeyIs(key, "pre")) {
      // Only the hash is kept: it is what the buffer held before the launch,
      // an input the origin analysis compares across runs (judge/data_flow).
      BufferStats pre;
      NT_RETURN_IF_ERROR(json::Prefixed(ParseStats(x, end, &pre), "pre."));
      b->has_pre = true;
      b->pre_hash = pre.hash;
    }
  }
  if (!has_dtype) return Missing("dtype");
  if (!has_role) return Missing("role");
  if (!has_stats) return Missing("stats");
  return absl::OkStatus();
}

absl::Status KernelRecordParser::ParseBuffers(od::value& v, const char* end) {
  od::array arr;
  if (auto e = v.get_array().get(arr)) return JsonError(e, "buffers", "an array");
  size_t index = 0;
  for (auto item : arr) {
    od::object object;
    if (auto e = item.get_object().get(object)) {
      return JsonError(e, Cat("buffers[", index, "]"), "an object");
    }
    Buffer& b = trace_->buffers.emplace_back();
    absl::Status s = ParseBuffer(object, end, &b);
    if (!s.ok()) return json::Prefixed(s, Cat("buffers[", index, "]."));
    ++index;
  }
  return absl::OkStatus();
}

absl::Status KernelRecordParser::Parse(od::object& object, const char* end) {
  Kernel k;
  KernelProvenance prov;
  bool has_seq = false, has_name = false, has_buffers = false, has_demangled = false;
  k.first_buffer = static_cast<uint32_t>(trace_->buffers.size());
  for (auto item : object) {
    NT_FIELD(item, f, key);
    od::value& x = f.value();
    if (KeyIs(key, "type")) continue;
    if (KeyIs(key, "seq")) {
      NT_RETURN_IF_ERROR(json::GetU64(x, "seq", &k.seq));
      has_seq = true;
    } else if (KeyIs(key, "launch")) {
      NT_RETURN_IF_ERROR(json::GetU64(x, "launch", &k.launch));
    } else if (KeyIs(key, "step")) {
      NT_RETURN_IF_ERROR(json::GetI64(x, "step", &k.step));
    } else if (KeyIs(key, "name")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "name", &s));
      k.name = trace_->strings.Intern(s);
      has_name = true;
    } else if (KeyIs(key, "demangled")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "demangled", &s));
      k.demangled = trace_->strings.Intern(s);
      has_demangled = true;
    } else if (KeyIs(key, "stream")) {
      NT_RETURN_IF_ERROR(json::GetU64(x, "stream", &k.stream));
    } else if (KeyIs(key, "grid")) {
      NT_RETURN_IF_ERROR(json::GetDim3(x, "grid", k.grid));
    } else if (KeyIs(key, "block")) {
      NT_RETURN_IF_ERROR(json::GetDim3(x, "block", k.block));
    } else if (KeyIs(key, "scope")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "scope", &s));
      prov.scope = trace_->strings.Intern(CapUtf8(s));
    } else if (KeyIs(key, "op")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "op", &s));
      prov.op = trace_->strings.Intern(CapUtf8(s));
    } else if (KeyIs(key, "src")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "src", &s));
      prov.src = trace_->strings.Intern(CapUtf8(s));
    } else if (KeyIs(key, "phase")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "phase", &s));
      // Optional field: a word from a later version is read as unknown,
      // and said once per trace (its notes reach diff's warnings and show).
      if (!ParsePhase(s, &prov.phase)) {
        prov.phase = Phase::kNone;
        if (!unknown_phase_said_) {
          unknown_phase_said_ = true;
          NoteRecord n;
          n.level = "info";
          n.msg = Cat("a kernel record's phase '", CapUtf8(s), "' is not a phase numtrace knows: read as none");
          trace_->notes.push_back(std::move(n));
        }
      }
    } else if (KeyIs(key, "level")) {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "level", &s));
      k.level = s == kOpRecordLevel ? RecordLevel::kOp : RecordLevel::kKernel;
    } else if (KeyIs(key, "buffers")) {
      NT_RETURN_IF_ERROR(ParseBuffers(x, end));
      has_buffers = true;
    }
  }
  if (!has_seq) return Missing("seq");
  if (!has_name) return Missing("name");
  if (!has_buffers) return Missing("buffers");
  if (k.seq != next_seq_) {
    return FieldError("seq", Cat(k.seq, " where ", next_seq_,
                                          " was expected (seq must be dense from 0)"));
  }
  if (!has_demangled) k.demangled = k.name;
  size_t count = trace_->buffers.size() - k.first_buffer;
  if (trace_->buffers.size() > UINT32_MAX) return FieldError("buffers", "more than 2^32 buffers in one trace");
  k.buffer_count = static_cast<uint32_t>(count);
  trace_->kernels.push_back(k);
  trace_->SetProvenance(trace_->kernels.size() - 1, prov);
  ++next_seq_;
  return absl::OkStatus();
}

}  // namespace numtrace::analyzer
