#include "shim/engine/tensor_dumper.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

#include "common/format/dump_record.h"
#include "common/format/npy.h"
#include "shim/engine/kernel_cache.h"
#include "shim/log/log.h"
#include "common/numeric/buffer_hash.h"
#include "shim/writer/trace_file.h"

namespace numtrace::shim {
namespace {

std::string Hex16(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string SizesText(const std::vector<uint64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

// Writes `head` then `body` to `fd` (-1: creates `path` exclusively, never
// over an existing file) and closes it. "" or the reason.
std::string WriteFile(const std::string& path, std::string_view head, std::span<const uint8_t> body,
                      int fd = -1) {
  if (fd < 0) fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) return path + ": exists (an earlier dump's file); not overwritten";
  if (fd < 0) return path + ": cannot create: " + std::strerror(errno);
  bool ok = WriteAll(fd, head) &&
            WriteAll(fd, std::string_view(reinterpret_cast<const char*>(body.data()), body.size()));
  const int err = errno;
  if (close(fd) != 0) ok = false;
  if (!ok) return path + ": cannot write: " + std::strerror(err);
  return "";
}

}  // namespace

std::string TensorDumper::ReportUnreached(uint64_t captured) const {
  std::string msg = selector_.Unreached(captured);
  if (!msg.empty()) log::Warn("{}", msg);
  return msg;
}

uint64_t HashBytes(std::span<const uint8_t> bytes) {
  uint64_t acc = 0;
  const uint64_t words = (bytes.size() + 7) / 8;
  for (uint64_t w = 0; w < words; ++w) acc += HashWord(LoadHashWord(bytes.data(), bytes.size(), w), w);
  return FinalizeHash(acc, bytes.size());
}

LaunchDump::~LaunchDump() {
  if (sidecar_fd >= 0) close(sidecar_fd);
}

TensorDumper::TensorDumper(const settings::Config& config, int64_t rank, int64_t pid)
    : config_(config),
      rank_(rank),
      pid_(pid),
      dir_(config.dump_dir.empty() ? config.output_dir : config.dump_dir),
      selector_(*config.dump) {}

std::unique_ptr<LaunchDump> TensorDumper::Plan(uint64_t seq, const KernelInfo& kernel,
                                               const std::vector<PlannedBuffer>& buffers,
                                               bool with_before, std::string* note) {
  if (!selector_.Select(seq, kernel)) return nullptr;
  uint64_t bytes = 0;
  for (const PlannedBuffer& b : buffers) bytes += b.bytes;
  if (with_before) bytes *= 2;
  if (used_ + bytes > config_.dump_max_bytes) {
    *note = "tensor dump of seq " + std::to_string(seq) + " (" + kernel.symbol + ", " +
            std::to_string(bytes) + " bytes) skipped: NUMTRACE_DUMP_MAX_BYTES=" +
            std::to_string(config_.dump_max_bytes) + " would be passed (" + std::to_string(used_) +
            " bytes dumped so far)";
    return nullptr;
  }
  used_ += bytes;
  auto d = std::make_unique<LaunchDump>();
  d->seq = seq;
  d->with_before = with_before;
  d->buffers = buffers;
  d->files.resize(buffers.size());
  // No buffers: nothing to copy, only the sidecar.
  d->outstanding = buffers.empty() ? 0 : with_before ? 2 : 1;
  return d;
}

bool TensorDumper::Claim(LaunchDump& d) {
  if (d.claimed) return true;
  if (d.refused) return false;
  if (!dir_made_) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    dir_made_ = true;
  }
  const int64_t pid = pid_ >= 0 ? pid_ : static_cast<int64_t>(getpid());
  const std::string plain = dir_ + "/" + DumpSidecarName(rank_, d.seq);
  std::string path = plain;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    path = dir_ + "/" + DumpSidecarName(rank_, d.seq, pid);
    fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) d.name_pid = pid;
  }
  if (fd < 0) {
    const int err = errno;
    d.refused = true;
    d.problems.push_back(
        "tensor dump of seq " + std::to_string(d.seq) + " not written: " +
        (err == EEXIST ? plain + " and " + path + " exist (earlier dumps); nothing is overwritten"
                       : path + ": cannot create: " + std::strerror(err)));
    return false;
  }
  d.sidecar_fd = fd;
  d.claimed = true;
  return true;
}

void TensorDumper::WriteCopy(LaunchDump& d, bool after, size_t item, std::span<const uint8_t> bytes,
                             bool failed) {
  if (item >= d.buffers.size()) return;
  const PlannedBuffer& b = d.buffers[item];
  const char* when = after ? "after" : "before";
  if (failed || bytes.size() != b.bytes) {
    d.problems.push_back("tensor dump of seq " + std::to_string(d.seq) + " arg " +
                         std::to_string(b.arg) + " (" + when + "): the device could not copy the buffer");
    return;
  }
  if (!Claim(d)) return;
  uint32_t nth = 0, count = 0;
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    if (d.buffers[i].arg != b.arg) continue;
    if (i < item) ++nth;
    ++count;
  }
  std::string name = DumpNpyName(rank_, d.seq, b.arg, nth, count, when, d.name_pid);
  std::string error = WriteFile(dir_ + "/" + name, NpyHeader(b.dtype, NpyElementCount(b.dtype, b.bytes)), bytes);
  if (!error.empty()) {
    d.problems.push_back("tensor dump of seq " + std::to_string(d.seq) + ": " + error);
    return;
  }
  LaunchDump::File& f = d.files[item];
  (after ? f.after : f.before) = name;
  (after ? f.after_hash : f.before_hash) = HashBytes(bytes);
}

std::vector<NoteRecord> TensorDumper::Finish(LaunchDump& d, const KernelRecord& r) {
  std::vector<std::string> problems = std::move(d.problems);
  const std::string what = "tensor dump of seq " + std::to_string(d.seq);
  if (d.unqueued_before || d.unqueued_after) {
    problems.push_back(what + ": the device could not queue the copy " +
                       (d.unqueued_before ? "before" : "after") + " the launch (see NUMTRACE_LOG_LEVEL=info)");
  }
  DumpRecord out;
  out.seq = d.seq;
  out.step = r.step;
  out.name = r.name;
  out.rank = rank_;
  for (size_t i = 0; i < r.buffers.size() && i < d.files.size(); ++i) {
    const BufferRecord& b = r.buffers[i];
    const LaunchDump::File& f = d.files[i];
    DumpBuffer db;
    db.arg = b.arg;
    db.role = b.role;
    db.dtype = b.dtype;
    db.bytes = b.bytes;
    db.n = b.stats.n;
    db.hash = b.stats.hash;
    db.after = f.after;
    db.before = f.before;
    // The dump must hold the bytes the trace measured (docs/format.md section 5).
    if (!f.after.empty() && f.after_hash != b.stats.hash) {
      problems.push_back(what + " arg " + std::to_string(b.arg) + ": the dumped bytes after the launch hash to " +
                         Hex16(f.after_hash) + ", the trace measured " + Hex16(b.stats.hash));
    }
    const uint64_t pre_hash = b.pre ? b.pre->hash : b.stats.hash;
    if (!f.before.empty() && b.role != Role::kUnknown && f.before_hash != pre_hash) {
      problems.push_back(what + " arg " + std::to_string(b.arg) + ": the dumped bytes before the launch hash to " +
                         Hex16(f.before_hash) + ", the trace measured " + Hex16(pre_hash));
    }
    out.buffers.push_back(std::move(db));
  }
  if (config_.dump_expect) {
    const settings::DumpExpectation& e = *config_.dump_expect;
    std::vector<uint64_t> sizes;
    for (const BufferRecord& b : r.buffers) sizes.push_back(b.bytes);
    if (e.name != r.name || (!e.bytes.empty() && e.bytes != sizes)) {
      problems.push_back(what + " is not the launch the trace named: dumped " + r.name + " with buffers of " +
                         SizesText(sizes) + " bytes, the trace had " + e.name + " with " +
                         SizesText(e.bytes) + " (the re-run launched differently; compare with care)");
    }
  }
  std::string json;
  AppendDumpJson(out, &json);
  if (Claim(d)) {  // claimed already unless no buffer was written
    const std::string sidecar = dir_ + "/" + DumpSidecarName(rank_, d.seq, d.name_pid);
    if (std::string error = WriteFile(sidecar, json, {}, std::exchange(d.sidecar_fd, -1)); !error.empty()) {
      problems.push_back(what + ": " + error);
    } else {
      log::Info("dumped seq {} ({}) into {}", d.seq, r.name, sidecar);
    }
  }
  for (std::string& p : d.problems) problems.push_back(std::move(p));  // from Claim here
  std::vector<NoteRecord> notes;
  for (std::string& p : problems) {
    log::Warn("{}", p);
    NoteRecord n;
    n.launch = r.launch;
    n.level = "warn";
    n.msg = std::move(p);
    notes.push_back(std::move(n));
  }
  return notes;
}

}  // namespace numtrace::shim
