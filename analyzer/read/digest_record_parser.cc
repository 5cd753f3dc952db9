#include "analyzer/read/digest_record_parser.h"

#include <string_view>

#include "analyzer/read/json_fields.h"
#include "analyzer/read/text_util.h"

namespace numtrace::analyzer {
namespace {

namespace od = simdjson::ondemand;
using json::FieldError;
using json::JsonError;

absl::Status GetHash(od::value& x, std::string_view field, const char* end, uint64_t* out) {
  od::raw_json_string raw;
  if (auto e = x.get_raw_json_string().get(raw)) return JsonError(e, field, "a string of 16 hex digits");
  if (!json::ParseHash16Raw(raw.raw(), out)) {
    return FieldError(field, Cat("expected 16 hex digits, got \"",
                                 json::RawString(raw.raw(), end).substr(0, 40), "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DigestRecordParser::ParseName(od::object& object, const char* end) {
  bool has_id = false, has_name = false;
  uint64_t id = 0;
  std::string_view name;
  for (auto item : object) {
    od::field f;
    if (auto e = std::move(item).get(f)) return JsonError(e, "kernel_name", "an object");
    std::string_view key = json::RawString(f.key().raw(), end);
    if (key == "id") {
      NT_RETURN_IF_ERROR(json::GetU64(f.value(), "kernel_name.id", &id));
      has_id = true;
    } else if (key == "name") {
      NT_RETURN_IF_ERROR(json::GetString(f.value(), "kernel_name.name", &name));
      has_name = true;
    }
  }
  if (!has_id) return FieldError("kernel_name.id", "missing");
  if (!has_name) return FieldError("kernel_name.name", "missing");
  const StringId interned = trace_->strings.Intern(name);
  auto [it, inserted] = names_.emplace(id, interned);
  if (!inserted && it->second != interned) {
    return FieldError("kernel_name.id", Cat(id, " is already the name of ", trace_->strings.View(it->second)));
  }
  return absl::OkStatus();
}

absl::Status DigestRecordParser::ParseDigest(od::object& object, const char* end) {
  StepDigest d;
  d.first = trace_->digest_hashes.size();
  const size_t names_before = trace_->digest_names.size();
  absl::Status s = Parse(object, end, &d);
  if (s.ok() && trace_->digest_hashes.size() - d.first != trace_->digest_names.size() - names_before) {
    s = FieldError("names", Cat(trace_->digest_names.size() - names_before, " names for ",
                                trace_->digest_hashes.size() - d.first, " kernel_hashes"));
  }
  if (s.ok() && d.kernels != trace_->digest_hashes.size() - d.first) {
    s = FieldError("kernels", Cat(d.kernels, " but ", trace_->digest_hashes.size() - d.first,
                                  " kernel_hashes"));
  }
  if (s.ok() && d.nonfinite && *d.nonfinite >= d.kernels) {
    s = FieldError("nonfinite", Cat(*d.nonfinite, " is not a launch of a step of ", d.kernels));
  }
  if (!s.ok()) {
    trace_->digest_hashes.resize(d.first);
    trace_->digest_names.resize(names_before);
    return json::Prefixed(s, "digest ");
  }
  trace_->digests.push_back(d);
  return absl::OkStatus();
}

absl::Status DigestRecordParser::Parse(od::object& object, const char* end, StepDigest* d) {
  bool has_step = false, has_kernels = false, has_hash = false, has_hashes = false, has_names = false;
  for (auto item : object) {
    od::field f;
    if (auto e = std::move(item).get(f)) return JsonError(e, "digest", "an object");
    std::string_view key = json::RawString(f.key().raw(), end);
    od::value& x = f.value();
    if (key == "step") {
      NT_RETURN_IF_ERROR(json::GetI64(x, "step", &d->step));
      has_step = true;
    } else if (key == "kernels") {
      NT_RETURN_IF_ERROR(json::GetU64(x, "kernels", &d->kernels));
      has_kernels = true;
    } else if (key == "hash") {
      NT_RETURN_IF_ERROR(GetHash(x, "hash", end, &d->hash));
      has_hash = true;
    } else if (key == "lost") {
      NT_RETURN_IF_ERROR(json::GetU64(x, "lost", &d->lost));
    } else if (key == "nonfinite") {
      bool is_null = false;
      if (x.is_null().get(is_null) || !is_null) {
        NT_RETURN_IF_ERROR(json::GetU64(x, "nonfinite", &d->nonfinite.emplace()));
      }
    } else if (key == "kernel_hashes") {
      od::array arr;
      if (auto e = x.get_array().get(arr)) return JsonError(e, "kernel_hashes", "an array of hashes");
      for (auto v : arr) {
        od::value h;
        if (auto e = std::move(v).get(h)) return JsonError(e, "kernel_hashes", "an array of hashes");
        NT_RETURN_IF_ERROR(GetHash(h, "kernel_hashes[]", end, &trace_->digest_hashes.emplace_back()));
      }
      has_hashes = true;
    } else if (key == "names") {
      od::array arr;
      if (auto e = x.get_array().get(arr)) return JsonError(e, "names", "an array of ids or names");
      for (auto v : arr) {
        od::value n;
        if (auto e = std::move(v).get(n)) return JsonError(e, "names", "an array of ids or names");
        od::json_type type;
        if (auto e = n.type().get(type)) return JsonError(e, "names[]", "an id or a name");
        if (type == od::json_type::string) {
          std::string_view name;
          NT_RETURN_IF_ERROR(json::GetString(n, "names[]", &name));
          trace_->digest_names.push_back(trace_->strings.Intern(name));
          continue;
        }
        uint64_t id = 0;
        NT_RETURN_IF_ERROR(json::GetU64(n, "names[]", &id));
        auto it = names_.find(id);
        if (it == names_.end()) {
          return FieldError("names[]", Cat("kernel_name id ", id, " is not defined before its use"));
        }
        trace_->digest_names.push_back(it->second);
      }
      has_names = true;
    }
  }
  if (!has_step) return FieldError("step", "missing");
  if (d->step < 0) return FieldError("step", Cat(d->step, " is negative (steps are numbered from 0)"));
  if (!has_kernels) return FieldError("kernels", "missing");
  if (!has_hash) return FieldError("hash", "missing");
  if (!has_hashes) return FieldError("kernel_hashes", "missing");
  if (!has_names) return FieldError("names", "missing");
  return absl::OkStatus();
}

}  // namespace numtrace::analyzer
