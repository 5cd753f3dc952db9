#include "common/format/dump_record.h"

#include "common/format/jsonl_writer.h"

namespace numtrace {

void AppendDumpJson(const DumpRecord& d, std::string* out) {
  out->append("{\"format\":");
  AppendJsonString(kDumpFormatName, out);
  out->append(",\"version\":").append(std::to_string(kDumpFormatVersion));
  out->append(",\"seq\":").append(std::to_string(d.seq));
  if (d.step) out->append(",\"step\":").append(std::to_string(*d.step));
  out->append(",\"name\":");
  AppendJsonString(d.name, out);
  out->append(",\"rank\":").append(std::to_string(d.rank));
  out->append(",\"buffers\":[");
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    const DumpBuffer& b = d.buffers[i];
    if (i) out->push_back(',');
    out->append("{\"arg\":").append(std::to_string(b.arg));
    out->append(",\"role\":");
    AppendJsonString(RoleName(b.role), out);
    out->append(",\"dtype\":");
    AppendJsonString(DTypeName(b.dtype), out);
    out->append(",\"bytes\":").append(std::to_string(b.bytes));
    out->append(",\"n\":").append(std::to_string(b.n));
    out->append(",\"hash\":");
    AppendHash16(b.hash, out);
    if (!b.before.empty()) {
      out->append(",\"before\":");
      AppendJsonString(b.before, out);
    }
    if (!b.after.empty()) {
      out->append(",\"after\":");
      AppendJsonString(b.after, out);
    }
    out->push_back('}');
  }
  out->append("]}\n");
}

namespace {
std::string DumpStem(int64_t rank, uint64_t seq, int64_t pid) {
  std::string s = "dump_" + std::to_string(rank) + "_" + std::to_string(seq);
  if (pid >= 0) s += ".pid" + std::to_string(pid);
  return s;
}
}  // namespace

std::string DumpSidecarName(int64_t rank, uint64_t seq, int64_t pid) {
  return DumpStem(rank, seq, pid) + ".json";
}

std::string DumpNpyName(int64_t rank, uint64_t seq, uint32_t arg, uint32_t nth, uint32_t count,
                        std::string_view when, int64_t pid) {
  std::string s = DumpStem(rank, seq, pid) + ".arg" + std::to_string(arg);
  if (count > 1) s += "_" + std::to_string(nth);
  s.push_back('.');
  s.append(when);
  s.append(".npy");
  return s;
}

}  // namespace numtrace
