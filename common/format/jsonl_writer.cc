#include "common/format/jsonl_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/text/utf8.h"

namespace numtrace {
namespace {

template <typename T>
void AppendInt(T v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

void AppendStats(const BufferStats& s, DType dtype, std::string* out) {
  out->push_back('{');
  AppendStatsFields(s, dtype, out);
  out->push_back('}');
}

void AppendDim3(const std::array<uint32_t, 3>& d, std::string* out) {
  out->push_back('[');
  for (int i = 0; i < 3; ++i) {
    if (i) out->push_back(',');
    AppendInt(d[i], out);
  }
  out->push_back(']');
}

void AppendStringObject(const EnvironmentValues& values, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out->push_back(',');
    AppendJsonString(values[i].first, out);
    out->push_back(':');
    AppendJsonString(values[i].second, out);
  }
  out->push_back('}');
}

}  // namespace

void AppendJsonInt(int64_t v, std::string* out) { AppendInt(v, out); }
void AppendJsonUint(uint64_t v, std::string* out) { AppendInt(v, out); }

void AppendStatsFields(const BufferStats& s, DType dtype, std::string* out) {
  out->append("\"n\":");
  AppendInt(s.n, out);
  if (dtype != DType::kRaw) {
    out->append(",\"nan\":");  AppendInt(s.nan, out);
    out->append(",\"inf\":");  AppendInt(s.inf, out);
    out->append(",\"ninf\":"); AppendInt(s.ninf, out);
    out->append(",\"zero\":"); AppendInt(s.zero, out);
    out->append(",\"sub\":");  AppendInt(s.sub, out);
    if (s.has_range) {
      out->append(",\"min\":"); AppendJsonDouble(s.min, out);
      out->append(",\"max\":"); AppendJsonDouble(s.max, out);
    }
    out->append(",\"sum\":"); AppendJsonDouble(s.sum, out);
    out->append(",\"l1\":");  AppendJsonDouble(s.l1, out);
    out->append(",\"l2\":");  AppendJsonDouble(s.l2, out);
  }
  out->append(",\"hash\":");
  AppendHash16(s.hash, out);
}

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out->append("\\\""); continue;
      case '\\': out->append("\\\\"); continue;
      case '\n': out->append("\\n"); continue;
      case '\r': out->append("\\r"); continue;
      case '\t': out->append("\\t"); continue;
      default: break;
    }
    if (c >= 0x20 && c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else if (size_t len = c >= 0x80 ? Utf8SequenceLength(s, i) : 0; len > 0) {
      out->append(s.substr(i, len));
      i += len - 1;
    } else {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
  out->push_back('"');
}

void AppendJsonDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round trip
  out->append(buf, r.ptr);
}

void AppendHexAddress(uint64_t v, std::string* out) {
  char buf[24];
  int n = std::snprintf(buf, sizeof(buf), "\"0x%llx\"", static_cast<unsigned long long>(v));
  out->append(buf, n);
}

void AppendHash16(uint64_t v, std::string* out) {
  char buf[24];
  int n = std::snprintf(buf, sizeof(buf), "\"%016llx\"", static_cast<unsigned long long>(v));
  out->append(buf, n);
}

void AppendJsonLine(const TraceHeader& h, std::string* out) {
  out->append("{\"type\":\"header\",\"format\":");
  AppendJsonString(kTraceFormatName, out);
  out->append(",\"version\":");
  AppendInt(kTraceFormatVersion, out);
  out->append(",\"producer\":");
  AppendJsonString(h.producer, out);
  if (h.run) {
    const RunInfo& r = *h.run;
    out->append(",\"run\":{\"label\":");
    AppendJsonString(r.label, out);
    out->append(",\"argv\":[");
    for (size_t i = 0; i < r.argv.size(); ++i) {
      if (i) out->push_back(',');
      AppendJsonString(r.argv[i], out);
    }
    out->append("],\"pid\":");       AppendInt(r.pid, out);
    out->append(",\"rank\":");       AppendInt(r.rank, out);
    out->append(",\"world_size\":"); AppendInt(r.world_size, out);
    out->append(",\"host\":");       AppendJsonString(r.host, out);
    out->append(",\"start_time\":"); AppendJsonString(r.start_time, out);
    out->push_back('}');
  }
  if (h.device) {
    const DeviceInfo& d = *h.device;
    out->append(",\"device\":{\"index\":"); AppendInt(d.index, out);
    out->append(",\"name\":");   AppendJsonString(d.name, out);
    out->append(",\"cc\":");     AppendJsonString(d.cc, out);
    out->append(",\"driver\":"); AppendJsonString(d.driver, out);
    out->append(",\"cuda\":");   AppendJsonString(d.cuda, out);
    out->push_back('}');
  }
  if (h.capture) {
    const CaptureInfo& c = *h.capture;
    out->append(",\"capture\":{\"steps\":[");
    for (size_t i = 0; i < c.steps.size(); ++i) {
      if (i) out->push_back(',');
      AppendInt(c.steps[i], out);
    }
    out->append("],\"outputs\":"); AppendJsonString(c.outputs, out);
    out->append(",\"selector\":"); AppendJsonString(c.selector, out);
    if (!c.watch.empty()) { out->append(",\"watch\":"); AppendJsonString(c.watch, out); }
    if (c.level) {
      out->append(",\"level\":\"");
      out->append(CaptureLevelName(*c.level));
      out->push_back('"');
    }
    out->append(",\"settings\":{");
    for (size_t i = 0; i < c.settings.size(); ++i) {
      if (i) out->push_back(',');
      AppendJsonString(c.settings[i].first, out);
      out->push_back(':');
      AppendJsonString(c.settings[i].second, out);
    }
    out->append("}}");
  }
  if (!h.environment.empty()) {
    out->append(",\"environment\":");
    AppendStringObject(h.environment, out);
  }
  out->append("}\n");
}

void AppendJsonLine(const KernelRecord& k, std::string* out) {
  out->append("{\"type\":\"kernel\",\"seq\":");
  AppendInt(k.seq, out);
  if (k.launch) { out->append(",\"launch\":"); AppendInt(*k.launch, out); }
  if (k.step) { out->append(",\"step\":"); AppendInt(*k.step, out); }
  if (k.op_level) {
    out->append(",\"level\":\"");
    out->append(kOpRecordLevel);
    out->push_back('"');
  }
  out->append(",\"name\":");
  AppendJsonString(k.name, out);
  if (!k.demangled.empty() && k.demangled != k.name) {
    out->append(",\"demangled\":");
    AppendJsonString(k.demangled, out);
  }
  if (k.stream) { out->append(",\"stream\":"); AppendInt(*k.stream, out); }
  if (k.grid) { out->append(",\"grid\":"); AppendDim3(*k.grid, out); }
  if (k.block) { out->append(",\"block\":"); AppendDim3(*k.block, out); }
  if (k.graph) { out->append(",\"graph\":"); AppendInt(*k.graph, out); }
  if (k.scope) { out->append(",\"scope\":"); AppendJsonString(*k.scope, out); }
  if (!k.op.empty()) { out->append(",\"op\":"); AppendJsonString(k.op, out); }
  if (k.phase != Phase::kNone) {
    out->append(",\"phase\":\"");
    out->append(PhaseName(k.phase));
    out->push_back('"');
  }
  if (!k.src.empty()) { out->append(",\"src\":"); AppendJsonString(k.src, out); }
  out->append(",\"buffers\":[");
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const BufferRecord& b = k.buffers[i];
    if (i) out->push_back(',');
    out->append("{\"arg\":");    AppendInt(b.arg, out);
    out->append(",\"addr\":");   AppendHexAddress(b.addr, out);
    out->append(",\"offset\":"); AppendInt(b.offset, out);
    out->append(",\"bytes\":");  AppendInt(b.bytes, out);
    out->append(",\"dtype\":\"");
    out->append(DTypeName(b.dtype));
    out->append("\",\"dtype_from\":\"");
    out->append(DTypeSourceName(b.dtype_from));
    out->append("\",\"role\":\"");
    out->append(RoleName(b.role));
    out->push_back('"');
    if (b.shape) {
      out->append(",\"shape\":[");
      for (size_t d = 0; d < b.shape->size(); ++d) {
        if (d) out->push_back(',');
        AppendInt((*b.shape)[d], out);
      }
      out->push_back(']');
    }
    if (!b.device.empty()) { out->append(",\"device\":"); AppendJsonString(b.device, out); }
    out->append(",\"stats\":");
    AppendStats(b.stats, b.dtype, out);
    if (b.pre) {
      out->append(",\"pre\":");
      AppendStats(*b.pre, b.dtype, out);
    }
    out->push_back('}');
  }
  out->append("]}\n");
}

void AppendJsonLine(const NoteRecord& n, std::string* out) {
  out->append("{\"type\":\"note\"");
  if (n.launch) { out->append(",\"launch\":"); AppendInt(*n.launch, out); }
  out->append(",\"level\":");
  AppendJsonString(n.level, out);
  out->append(",\"msg\":");
  AppendJsonString(n.msg, out);
  if (!n.kind.empty()) { out->append(",\"kind\":"); AppendJsonString(n.kind, out); }
  if (!n.name.empty()) { out->append(",\"name\":"); AppendJsonString(n.name, out); }
  if (n.count) { out->append(",\"count\":"); AppendInt(*n.count, out); }
  out->append("}\n");
}

void AppendJsonLine(const FooterRecord& f, std::string* out) {
  out->append("{\"type\":\"footer\",\"kernels\":");
  AppendInt(f.kernels, out);
  out->append(",\"launches\":"); AppendInt(f.launches, out);
  out->append(",\"dropped\":");  AppendInt(f.dropped, out);
  out->append(",\"unmeasured\":"); AppendInt(f.unmeasured, out);
  if (!f.counters.empty()) {
    out->append(",\"counters\":{");
    for (size_t i = 0; i < f.counters.size(); ++i) {
      if (i) out->push_back(',');
      AppendJsonString(f.counters[i].first, out);
      out->push_back(':');
      AppendInt(f.counters[i].second, out);
    }
    out->push_back('}');
  }
  out->append(",\"status\":");   AppendJsonString(f.status, out);
  out->append(",\"end_time\":"); AppendJsonString(f.end_time, out);
  out->append("}\n");
}

void AppendJsonLine(const DigestRecord& d, std::string* out) {
  out->append("{\"type\":\"digest\",\"step\":");
  AppendInt(d.step, out);
  out->append(",\"kernels\":"); AppendInt(d.kernels, out);
  out->append(",\"hash\":");    AppendHash16(d.hash, out);
  out->append(",\"nonfinite\":");
  if (d.nonfinite) AppendInt(*d.nonfinite, out);
  else out->append("null");
  if (d.lost != 0) { out->append(",\"lost\":"); AppendInt(d.lost, out); }
  // The bulk of a watch trace: ~19 bytes per launch here, a few for its name id.
  out->append(",\"kernel_hashes\":[");
  for (size_t i = 0; i < d.kernel_hashes.size(); ++i) {
    if (i) out->push_back(',');
    AppendHash16(d.kernel_hashes[i], out);
  }
  out->append("],\"names\":[");
  for (size_t i = 0; i < d.names.size(); ++i) {
    if (i) out->push_back(',');
    AppendInt(d.names[i], out);
  }
  out->append("]}\n");
}

void AppendJsonLine(const KernelNameRecord& n, std::string* out) {
  out->append("{\"type\":\"kernel_name\",\"id\":");
  AppendInt(n.id, out);
  out->append(",\"name\":");
  AppendJsonString(n.name, out);
  out->append("}\n");
}

void AppendJsonLine(const EnvironmentRecord& e, std::string* out) {
  out->append("{\"type\":\"environment\",\"values\":");
  AppendStringObject(e.values, out);
  out->append("}\n");
}

}  // namespace numtrace
