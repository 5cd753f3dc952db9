#include "analyzer/read/meta_record_parser.h"

#include <string>
#include <utility>

#include "analyzer/read/json_fields.h"
#include "analyzer/read/text_util.h"

namespace numtrace::analyzer {
namespace {

namespace od = simdjson::ondemand;
using json::FieldError;
using json::JsonError;

// Calls fn(key, value&) for every field of `v`, which must be an object.
template <typename Fn>
absl::Status ForEachField(od::value& v, std::string_view name, const char* end, Fn fn) {
  od::object object;
  if (auto e = v.get_object().get(object)) return JsonError(e, name, "an object");
  for (auto item : object) {
    od::field f;
    if (auto e = std::move(item).get(f)) return JsonError(e, name, "an object");
    NT_RETURN_IF_ERROR(fn(json::RawString(f.key().raw(), end), f.value()));
  }
  return absl::OkStatus();
}

absl::Status GetOwnedString(od::value& v, std::string_view field, std::string* out) {
  std::string_view s;
  NT_RETURN_IF_ERROR(json::GetString(v, field, &s));
  out->assign(s);
  return absl::OkStatus();
}

absl::Status ParseRun(od::value& v, const char* end, RunInfo* run) {
  return ForEachField(v, "run", end, [&](std::string_view key, od::value& x) -> absl::Status {
    if (key == "label") return GetOwnedString(x, "run.label", &run->label);
    if (key == "pid") return json::GetI64(x, "run.pid", &run->pid);
    if (key == "rank") return json::GetI64(x, "run.rank", &run->rank);
    if (key == "world_size") return json::GetI64(x, "run.world_size", &run->world_size);
    if (key == "host") return GetOwnedString(x, "run.host", &run->host);
    if (key == "start_time") return GetOwnedString(x, "run.start_time", &run->start_time);
    if (key == "argv") {
      od::array arr;
      if (auto e = x.get_array().get(arr)) return JsonError(e, "run.argv", "an array of strings");
      for (auto item : arr) {
        od::value s;
        if (auto e = std::move(item).get(s)) return JsonError(e, "run.argv", "an array of strings");
        NT_RETURN_IF_ERROR(GetOwnedString(s, "run.argv[]", &run->argv.emplace_back()));
      }
    }
    return absl::OkStatus();
  });
}

absl::Status ParseDevice(od::value& v, const char* end, DeviceInfo* d) {
  return ForEachField(v, "device", end, [&](std::string_view key, od::value& x) -> absl::Status {
    if (key == "index") return json::GetI64(x, "device.index", &d->index);
    if (key == "name") return GetOwnedString(x, "device.name", &d->name);
    if (key == "cc") return GetOwnedString(x, "device.cc", &d->cc);
    if (key == "driver") return GetOwnedString(x, "device.driver", &d->driver);
    if (key == "cuda") return GetOwnedString(x, "device.cuda", &d->cuda);
    return absl::OkStatus();
  });
}

absl::Status ParseCapture(od::value& v, const char* end, CaptureInfo* c) {
  return ForEachField(v, "capture", end, [&](std::string_view key, od::value& x) -> absl::Status {
    if (key == "outputs") return GetOwnedString(x, "capture.outputs", &c->outputs);
    if (key == "selector") return GetOwnedString(x, "capture.selector", &c->selector);
    if (key == "watch") return GetOwnedString(x, "capture.watch", &c->watch);
    if (key == "level") {
      // A later version's word is not an error: readers ignore what they do
      // not know, and a trace without a level is kernel level.
      std::string word;
      NT_RETURN_IF_ERROR(GetOwnedString(x, "capture.level", &word));
      c->level = EnumFromName<CaptureLevel>(kCaptureLevelNames, word);
      return absl::OkStatus();
    }
    if (key == "settings") {
      return ForEachField(x, "capture.settings", end, [&](std::string_view name, od::value& value) -> absl::Status {
        auto& setting = c->settings.emplace_back(std::string(name), std::string());
        return GetOwnedString(value, "capture.settings", &setting.second);
      });
    }
    if (key == "steps") {
      od::array arr;
      if (auto e = x.get_array().get(arr)) return JsonError(e, "capture.steps", "an array of integers");
      for (auto item : arr) {
        od::value s;
        if (auto e = std::move(item).get(s)) return JsonError(e, "capture.steps", "an array of integers");
        NT_RETURN_IF_ERROR(json::GetI64(s, "capture.steps[]", &c->steps.emplace_back()));
      }
    }
    return absl::OkStatus();
  });
}

// "counters": an object of unsigned integers, kept in file order.
absl::Status ParseCounters(od::value& v, const char* end,
                           std::vector<std::pair<std::string, uint64_t>>* out) {
  return ForEachField(v, "counters", end, [&](std::string_view key, od::value& x) -> absl::Status {
    uint64_t n = 0;
    NT_RETURN_IF_ERROR(json::GetU64(x, "counters", &n));
    out->emplace_back(std::string(key), n);
    return absl::OkStatus();
  });
}

// A flat object of strings (docs/format.md, "The header's environment"),
// merged into `out`: a later value of a key replaces the earlier one.
absl::Status ParseEnvironmentValues(od::value& v, std::string_view name, const char* end, EnvironmentValues* out) {
  return ForEachField(v, name, end, [&](std::string_view key, od::value& x) -> absl::Status {
    std::string_view s;
    NT_RETURN_IF_ERROR(json::GetString(x, Cat(name, ".", key.substr(0, 80)), &s));
    SetEnvironmentValue(out, key, s);
    return absl::OkStatus();
  });
}

}  // namespace

absl::Status ParseEnvironmentRecord(od::object& object, const char* end, EnvironmentValues* out) {
  for (auto item : object) {
    od::field f;
    if (auto e = std::move(item).get(f)) return JsonError(e, "environment", "an object");
    if (json::RawString(f.key().raw(), end) == "values") {
      NT_RETURN_IF_ERROR(ParseEnvironmentValues(f.value(), "values", end, out));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseHeaderRecord(od::object& object, const char* end, TraceHeader* out) {
  bool has_format = false, has_version = false;
  for (auto item : object) {
    od::field f;
    if (auto e = std::move(item).get(f)) return JsonError(e, "header", "an object");
    std::string_view key = json::RawString(f.key().raw(), end);
    od::value& x = f.value();
    if (key == "format") {
      std::string_view s;
      NT_RETURN_IF_ERROR(json::GetString(x, "format", &s));
      if (s != kTraceFormatName) {
        return FieldError("format", Cat("\"", s.substr(0, 60), "\" is not \"",
                                                 kTraceFormatName, "\""));
      }
      has_format = true;
    } else if (key == "version") {
      int64_t version;
      NT_RETURN_IF_ERROR(json::GetI64(x, "version", &version));
      if (version != kTraceFormatVersion) {
        return FieldError("version", Cat("unsupported version ", version,
                                                  " (this reader reads version ",
                                                  kTraceFormatVersion, ")"));
      }
      has_version = true;
    } else if (key == "producer") {
      NT_RETURN_IF_ERROR(GetOwnedString(x, "producer", &out->producer));
    } else if (key == "run") {
      NT_RETURN_IF_ERROR(ParseRun(x, end, &out->run.emplace()));
    } else if (key == "device") {
      bool is_null = false;
      if (x.is_null().get(is_null) || !is_null) {
        NT_RETURN_IF_ERROR(ParseDevice(x, end, &out->device.emplace()));
      }
    } else if (key == "capture") {
      NT_RETURN_IF_ERROR(ParseCapture(x, end, &out->capture.emplace()));
    } else if (key == "environment") {
      NT_RETURN_IF_ERROR(ParseEnvironmentValues(x, "environment", end, &out->environment));
    }
  }
  if (!has_format) return FieldError("format", "missing (MUST field of the header)");
  if (!has_version) return FieldError("version", "missing (MUST field of the header)");
  return absl::OkStatus();
}

absl::Status ParseNoteRecord(od::object& object, const char* end, NoteRecord* out) {
  for (auto item : object) {
    od::field f;
    if (auto e = std::move(item).get(f)) return JsonError(e, "note", "an object");
    std::string_view key = json::RawString(f.key().raw(), end);
    od::value& x = f.value();
    if (key == "launch") {
      NT_RETURN_IF_ERROR(json::GetU64(x, "launch", &out->launch.emplace()));
    } else if (key == "level") {
      NT_RETURN_IF_ERROR(GetOwnedString(x, "level", &out->level));
    } else if (key == "msg") {
      NT_RETURN_IF_ERROR(GetOwnedString(x, "msg", &out->msg));
    } else if (key == "kind") {
      NT_RETURN_IF_ERROR(GetOwnedString(x, "kind", &out->kind));
    } else if (key == "name") {
      NT_RETURN_IF_ERROR(GetOwnedString(x, "name", &out->name));
    } else if (key == "count") {
      NT_RETURN_IF_ERROR(json::GetU64(x, "count", &out->count.emplace()));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseFooterRecord(od::object& object, const char* end, FooterRecord* out) {
  for (auto item : object) {
    od::field f;
    if (auto e = std::move(item).get(f)) return JsonError(e, "footer", "an object");
    std::string_view key = json::RawString(f.key().raw(), end);
    od::value& x = f.value();
    if (key == "kernels") NT_RETURN_IF_ERROR(json::GetU64(x, "kernels", &out->kernels));
    else if (key == "launches") NT_RETURN_IF_ERROR(json::GetU64(x, "launches", &out->launches));
    else if (key == "dropped") NT_RETURN_IF_ERROR(json::GetU64(x, "dropped", &out->dropped));
    else if (key == "unmeasured") NT_RETURN_IF_ERROR(json::GetU64(x, "unmeasured", &out->unmeasured));
    else if (key == "counters") NT_RETURN_IF_ERROR(ParseCounters(x, end, &out->counters));
    else if (key == "status") NT_RETURN_IF_ERROR(GetOwnedString(x, "status", &out->status));
    else if (key == "end_time") NT_RETURN_IF_ERROR(GetOwnedString(x, "end_time", &out->end_time));
  }
  return absl::OkStatus();
}

}  // namespace numtrace::analyzer
