// File: shim/engine/tensor_dumper.h
//
// Tensor dumps of selected launches (NUMTRACE_DUMP; docs/format.md section
// 5). The engine asks Plan() for each captured launch, in seq order, under
// the lock that numbers launches; a planned launch gets its buffers copied
// by the Device before the kernel (ENTER) and after it (EXIT), on the
// launch's stream. The copies come back on the writer's thread (Engine::Pump),
// where WriteCopy() writes each as a .npy file and hashes the bytes; when the
// launch's record is emitted, Finish() writes the JSON sidecar and checks:
//   - the dumped bytes hash to the trace's `hash` (after) and to the `pre`
//     hash (before): a mismatch means the copy is not what was measured;
//   - the launch is the one NUMTRACE_DUMP_EXPECT names (kernel name, buffer
//     sizes): a re-run that launched differently dumps something else.
// Every failure becomes a note in the trace and one stderr line.
//
// Nothing is overwritten: every file of a dump set is created exclusively
// (O_EXCL). A second process of the rank, or a later run into the same
// directory, finds the plain names taken and writes its set under its pid's
// names (dump_record.h); a file that exists anyway is not replaced and a note
// says so, so two processes never share one set.
//
// Bounds: NUMTRACE_DUMP_MAX_BYTES caps the bytes of all dumps of the
// process (before and after copies together). A launch that would pass it
// is not dumped, and one note says so; later, smaller launches may still fit.
// At most that many bytes are ever held in host memory waiting to be written.
//
// Example:
//   TensorDumper dumper(config, /*rank=*/0);
//   auto plan = dumper.Plan(seq, kernel, buffers, /*with_before=*/true, &note);
//   ...copies arrive... dumper.WriteCopy(*plan, /*after=*/true, i, bytes, false);
//   dumper.Finish(*plan, record, &notes);   // sidecar + checks
#ifndef NUMTRACE_SHIM_ENGINE_TENSOR_DUMPER_H_
#define NUMTRACE_SHIM_ENGINE_TENSOR_DUMPER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/format/records.h"
#include "common/settings/config.h"
#include "common/settings/dump_selector.h"
#include "shim/engine/measurement_plan.h"

namespace numtrace::shim {

struct KernelInfo;

// One planned dump, owned by the engine's pending entry of the launch.
struct LaunchDump {
  LaunchDump() = default;
  LaunchDump(const LaunchDump&) = delete;
  LaunchDump& operator=(const LaunchDump&) = delete;
  ~LaunchDump();
  uint64_t seq = 0;  // as this run numbers it (the selection's seq)
  // The dump set's names, claimed (writer thread) before its first file by
  // creating the sidecar exclusively: plain names, else the pid's
  // (dump_record.h); refused when both exist. The sidecar's bytes go into
  // sidecar_fd at Finish.
  bool claimed = false, refused = false;
  int64_t name_pid = -1;
  int sidecar_fd = -1;
  bool with_before = false;
  struct File {
    std::string before, after;  // .npy names, set once written
    uint64_t before_hash = 0, after_hash = 0;
  };
  std::vector<PlannedBuffer> buffers;  // what was copied, for the sidecar
  std::vector<File> files;             // one per buffer
  // Guarded by the engine's lock: copies (before/after) not yet back, and
  // those the device refused to queue.
  int outstanding = 0;
  int unqueued_before = 0, unqueued_after = 0;
  std::vector<std::string> problems;   // writer thread only; notes at Finish
};

class TensorDumper {
 public:
  // `config.dump` must be set. Files go to config.dump_dir, else output_dir.
  // `pid`: for the names of a set whose plain names are taken (-1: getpid()
  // when the set is claimed, so a forked child uses its own).
  TensorDumper(const settings::Config& config, int64_t rank, int64_t pid = -1);

  // Decides whether launch `seq` is dumped. On a skip for the byte budget,
  // `*note` says so (once per launch). Not thread-safe (engine lock).
  std::unique_ptr<LaunchDump> Plan(uint64_t seq, const KernelInfo& kernel,
                                   const std::vector<PlannedBuffer>& buffers, bool with_before,
                                   std::string* note);

  // Writes one copied buffer; `failed`: the device could not copy it.
  // Writer thread only.
  void WriteCopy(LaunchDump& dump, bool after, size_t item, std::span<const uint8_t> bytes,
                 bool failed);

  // Writes the sidecar for the emitted `record` and returns the notes of
  // everything that went wrong (also logged). Writer thread only.
  std::vector<NoteRecord> Finish(LaunchDump& dump, const KernelRecord& record);

  // At the end of the run: DumpSelector::Unreached, also logged as one
  // warning line (a dump asked for and never made is never silent).
  std::string ReportUnreached(uint64_t captured) const;
  const std::string& dir() const { return dir_; }
  uint64_t used_bytes() const { return used_; }

 private:
  // Claims `d`'s names (see LaunchDump); false with a problem recorded.
  bool Claim(LaunchDump& d);

  const settings::Config& config_;
  const int64_t rank_;
  const int64_t pid_;
  const std::string dir_;
  settings::DumpSelector selector_;
  uint64_t used_ = 0;
  bool dir_made_ = false;
};

// The 64-bit hash of trace format v1 over `bytes` (what `stats.hash` holds).
uint64_t HashBytes(std::span<const uint8_t> bytes);

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_TENSOR_DUMPER_H_
