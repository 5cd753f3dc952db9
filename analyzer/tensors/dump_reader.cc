#include "analyzer/tensors/dump_reader.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <new>

#include "common/io/bounded_file.h"
#include "analyzer/tensors/npy_reader.h"
#include "common/format/dump_record.h"
#include "common/format/npy.h"
#include "common/numeric/buffer_hash.h"
#include "common/status/status_macros.h"
#include "simdjson.h"

namespace numtrace::analyzer {
namespace {

namespace fs = std::filesystem;

// A sidecar lists the launch's buffers (~200 B each).
constexpr uint64_t kMaxSidecarBytes = uint64_t{64} << 20;

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(path + ": " + what);
}

uint64_t HashOf(const std::vector<uint8_t>& b) {
  uint64_t acc = 0;
  for (uint64_t w = 0; w < (b.size() + 7) / 8; ++w) {
    acc += HashWord(LoadHashWord(b.data(), b.size(), w), w);
  }
  return FinalizeHash(acc, b.size());
}

std::string Hex16(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

absl::StatusOr<DumpSide> ReadBareNpy(const std::string& path, std::optional<DType> dtype) {
  NT_ASSIGN_OR_RETURN(NpyArray npy, ReadNpy(path));
  DumpSide side;
  side.path = path;
  DumpArray a;
  std::optional<DType> t = dtype ? dtype : DTypeForDescr(npy.descr);
  if (!t) return Bad(path, "descr '" + npy.descr + "' is no trace dtype; say which with --dtype");
  if (npy.data.size() % DTypeSize(*t) != 0) {
    return Bad(path, std::to_string(npy.data.size()) + " bytes are not whole " + std::string(DTypeName(*t)) +
                         " elements");
  }
  a.dtype = *t;
  a.when = "after";
  a.file = path;
  a.data = std::move(npy.data);
  side.arrays.push_back(std::move(a));
  return side;
}

absl::StatusOr<DumpSide> ReadSidecar(const std::string& path) {
  NT_ASSIGN_OR_RETURN(const std::string text, ReadBoundedFile(path, "the dump sidecar", kMaxSidecarBytes));
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto e = parser.parse(simdjson::padded_string(text)).get(root); e != simdjson::SUCCESS) {
    if (e == simdjson::MEMALLOC) {
      return absl::ResourceExhaustedError(path + ": out of memory parsing the dump sidecar");
    }
    return Bad(path, std::string("not a readable dump sidecar: ") + simdjson::error_message(e));
  }
  std::string_view format;
  if (root["format"].get(format) != simdjson::SUCCESS || format != kDumpFormatName) {
    return Bad(path, "not a numtrace dump sidecar (format is not \"numtrace-dump\")");
  }
  uint64_t version = 0;
  if (root["version"].get(version) != simdjson::SUCCESS || version != 1) {
    return Bad(path, "dump sidecar version is not 1");
  }
  DumpSide side;
  side.path = path;
  uint64_t seq;
  if (root["seq"].get(seq) == simdjson::SUCCESS) side.seq = seq;
  std::string_view name;
  if (root["name"].get(name) == simdjson::SUCCESS) side.name = std::string(name);
  simdjson::dom::array buffers;
  if (root["buffers"].get(buffers) != simdjson::SUCCESS) return Bad(path, "buffers: expected a list");
  const fs::path dir = fs::path(path).parent_path();
  std::map<uint32_t, uint32_t> seen_args;
  size_t index = 0;
  for (simdjson::dom::element b : buffers) {
    const std::string where = "buffers[" + std::to_string(index++) + "]";
    uint64_t arg = 0, bytes = 0;
    std::string_view dtype_s, role_s, hash_s;
    if (b["arg"].get(arg) != simdjson::SUCCESS || arg > UINT32_MAX) return Bad(path, where + ".arg: expected an unsigned integer");
    if (b["dtype"].get(dtype_s) != simdjson::SUCCESS) return Bad(path, where + ".dtype: expected a string");
    if (b["bytes"].get(bytes) != simdjson::SUCCESS) return Bad(path, where + ".bytes: expected an unsigned integer");
    DType dtype;
    if (!ParseDType(dtype_s, &dtype)) return Bad(path, where + ".dtype: unknown dtype '" + std::string(dtype_s) + "'");
    Role role = Role::kUnknown;
    if (b["role"].get(role_s) == simdjson::SUCCESS && !ParseRole(role_s, &role)) {
      return Bad(path, where + ".role: unknown role '" + std::string(role_s) + "'");
    }
    uint64_t hash = 0;
    bool has_hash = b["hash"].get(hash_s) == simdjson::SUCCESS && hash_s.size() == 16;
    if (has_hash) {
      for (char c : hash_s) {
        hash = hash << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
      }
    }
    const uint32_t nth = seen_args[static_cast<uint32_t>(arg)]++;
    for (const char* when : {"before", "after"}) {
      std::string_view file;
      if (b[when].get(file) != simdjson::SUCCESS) continue;
      DumpArray a;
      a.arg = static_cast<uint32_t>(arg);
      a.nth = nth;
      a.role = role;
      a.when = when;
      a.dtype = dtype;
      a.hash = hash;
      a.file = (dir / std::string(file)).string();
      NT_ASSIGN_OR_RETURN(NpyArray npy, ReadNpy(a.file));
      if (npy.data.size() != bytes) {
        return Bad(a.file, "holds " + std::to_string(npy.data.size()) + " bytes, the sidecar says " +
                               std::to_string(bytes));
      }
      a.data = std::move(npy.data);
      if (has_hash && a.when == "after" && HashOf(a.data) != hash) {
        side.warnings.push_back(a.file + ": its bytes hash to " + Hex16(HashOf(a.data)) +
                                ", the trace measured " + std::string(hash_s));
      }
      side.arrays.push_back(std::move(a));
    }
  }
  return side;
}

}  // namespace

namespace {
// Throws std::bad_alloc when memory runs out (ReadDumpSide reports it).
absl::StatusOr<DumpSide> ReadDumpSideOrThrow(const std::string& path, std::optional<DType> dtype) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> sidecars;
    for (const auto& e : fs::directory_iterator(path, ec)) {
      const std::string n = e.path().filename().string();
      if (n.starts_with("dump_") && n.ends_with(".json")) sidecars.push_back(e.path().string());
    }
    std::sort(sidecars.begin(), sidecars.end());
    if (sidecars.empty()) return Bad(path, "no tensor dump here (no dump_*.json sidecar)");
    if (sidecars.size() > 1) {
      return Bad(path, "holds " + std::to_string(sidecars.size()) + " dumps (" + sidecars[0] + ", ...): name one sidecar");
    }
    return ReadSidecar(sidecars[0]);
  }
  if (!fs::exists(path, ec)) return absl::NotFoundError(path + ": no such file or directory");
  if (path.ends_with(".npy")) return ReadBareNpy(path, dtype);
  return ReadSidecar(path);
}

}  // namespace

absl::StatusOr<DumpSide> ReadDumpSide(const std::string& path, std::optional<DType> dtype) {
  try {
    return ReadDumpSideOrThrow(path, dtype);
  } catch (const std::bad_alloc&) {  // named here, not blamed on the comparison after it
    return absl::ResourceExhaustedError(path + ": out of memory reading the tensor dump");
  }
}

}  // namespace numtrace::analyzer
