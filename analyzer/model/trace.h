// File: analyzer/model/trace.h
//
// The analyzer's in-memory form of one trace: what the importers (read/)
// produce and every later stage (align/, judge/, report/) consumes. Compact on
// purpose: a 1M-kernel pair must diff within a few GB, so kernels and buffers
// are flat vectors, strings are interned once, and of the per-buffer `pre`
// stats only the hash is kept (what origin analysis compares).
//
// Example:
//   absl::StatusOr<Trace> t = ReadTraceFile("rank_0.ntrace.jsonl");  // read/
//   for (const Kernel& k : t->kernels) t->BuffersOf(k);  // that kernel's buffers
#ifndef NUMTRACE_ANALYZER_MODEL_TRACE_H_
#define NUMTRACE_ANALYZER_MODEL_TRACE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/model/string_pool.h"
#include "common/format/records.h"

namespace numtrace::analyzer {

inline constexpr uint64_t kNoValue = ~uint64_t{0};  // absent optional field
inline constexpr StringId kNoString = ~StringId{0};  // absent optional string field

// How a kernel's reads link to earlier writes (judge/data_flow.h).
enum class FlowKey : uint8_t {
  kAddress,    // Buffer::addr is a device address: a read is the last write there
  kHashChain,  // no addresses: Buffer::addr names the producing kernel, else an
               // input is the last output with its hash (stats.hash)
};

// What a record stands for: a kernel launch on a device, or an operator
// (one PyTorch op, named by its module path and op, as DebugMode logs it).
enum class RecordLevel : uint8_t { kKernel, kOp };

// What a buffer's measured values are, so judging knows what "equal" means
// and how to score a difference (judge/value_compare.h). A bit set: one value
// may carry several (a DebugMode JSON log can hold a norm and hash_tensor).
enum Fingerprint : uint8_t {
  // stats.hash is a 64-bit hash of the raw bytes (numtrace traces): equal
  // hashes are equal bytes under any dtype label, and the statistics are
  // exact float64 aggregates judged by the tolerance model.
  kBytesHash = 1,
  // Trace::printed holds statistics as a log printed them (an L1 "norm" with
  // 7 significant digits, L2, min, max, mean): equal prints are not equal
  // bytes, a difference is scored against the printed digits. stats.hash is
  // the bit pattern of the printed L1 (a key for alignment, not a proof).
  kPrintedStats = 2,
  // stats.hash is PyTorch's `hash_tensor` of the values: a bitwise
  // fingerprint (equal = bitwise equal), nothing to score a difference by.
  kHashTensor = 4,
};

struct Buffer {
  // The data-flow key (see Trace::flow): the device address, or under
  // FlowKey::kHashChain 1 + the index of the kernel that produced the value
  // (0: not known; the value's hash chain links it instead).
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint32_t arg = 0;
  DType dtype = DType::kRaw;
  DTypeSource dtype_from = DTypeSource::kDefault;
  Role role = Role::kUnknown;
  bool has_pre : 1 = false;  // `pre` was recorded: pre_hash is its hash
  uint8_t fingerprint : 7 = kBytesHash;  // Fingerprint bits (bit fields: no growth of the struct)
  uint64_t pre_hash = 0;  // hash of the contents before the launch (an input)
  BufferStats stats;
  // Operator-level records (docs/format.md): the tensor's shape as written
  // compactly ("[2,3]") and its device ("cpu", "cuda:0"); kNoString when absent.
  StringId shape = kNoString;
  StringId device = kNoString;

  // Written by its kernel (`out`, or `unknown`: not measured before, so
  // maybe written); `in` buffers were only read.
  bool IsOutput() const { return role != Role::kIn; }
  bool HasNonfinite() const { return stats.nan + stats.inf + stats.ninf > 0; }
  bool Has(Fingerprint f) const { return (fingerprint & f) != 0; }
};

struct Kernel {
  uint64_t seq = 0;
  uint64_t launch = kNoValue;
  int64_t step = -1;               // -1 when absent
  StringId name = 0;               // as recorded
  StringId demangled = 0;          // == name when the trace had none
  uint64_t stream = kNoValue;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t first_buffer = 0;       // index into Trace::buffers
  uint32_t buffer_count = 0;
  RecordLevel level = RecordLevel::kKernel;
};

// One `digest` record (watch mode, docs/format.md): the step's launches are
// [first, first + kernels) of Trace::digest_hashes / digest_names.
struct StepDigest {
  int64_t step = 0;
  uint64_t kernels = 0;
  uint64_t hash = 0;
  std::optional<uint64_t> nonfinite;  // index in the step of the first launch leaving a NaN/Inf
  uint64_t lost = 0;                  // launches the shim could not digest
  uint64_t first = 0;
};

// The statistics a log printed for one buffer (Fingerprint::kPrintedStats),
// as printed (non-finite included), and which of them it printed. An L1
// "norm" rounded to 7 significant digits is not a hash of the bytes, so the
// judge compares these (judge/value_compare.h) rather than `stats.hash`.
struct PrintedStats {
  enum Bit : uint8_t { kL1 = 1, kL2 = 2, kMin = 4, kMax = 8, kMean = 16 };
  double l1 = 0, l2 = 0, min = 0, max = 0, mean = 0;
  uint8_t has = 0;      // Bit set
  uint8_t digits = 7;   // significant digits printed (torchtitan's %.6e: 7; repr of a double: 17)
};

// Where in the model a kernel came from (trace format 1.2; DebugMode's FQN,
// op and phase land here too). Kept beside the kernels, not in them, so a
// trace without provenance pays nothing for it.
struct KernelProvenance {
  StringId scope = kNoString;  // module path; "" is the root module
  StringId op = kNoString;     // "aten::mm", "aten::add+aten::mul"
  Phase phase = Phase::kNone;
  StringId src = kNoString;    // "train.py:42", the innermost user frame
};

struct Trace {
  std::string path;
  std::string label;   // run.label from the header, else the file name
  int64_t rank = 0;    // from the header, else the file name, else 0
  // What the file is, in words, for messages ("numtrace trace", "DebugMode
  // log"): the name of its importer's table row (read/importer.h). No stage
  // decides by it; what a trace holds is said by the fields below.
  std::string_view kind = "numtrace trace";
  // What the producer can record at all: a stage says "not recorded" rather
  // than "absent" where the format has no place for it.
  bool records_environment = true;  // the header environment (format 1.1)
  bool records_launches = true;     // launches numtrace can capture again (dump recipes)
  FlowKey flow = FlowKey::kAddress;
  TraceHeader header;
  bool truncated = false;                // cut short: see truncated_how
  std::string_view truncated_how = "cut short: no footer, the process was killed";
  std::optional<FooterRecord> footer;
  std::vector<NoteRecord> notes;

  StringPool strings;
  std::vector<Kernel> kernels;  // in seq order, kernels[i].seq == i for our traces
  std::vector<Buffer> buffers;  // all kernels' buffers, each kernel's contiguous
  // Empty when no kernel had provenance, else parallel to `kernels`.
  std::vector<KernelProvenance> provenance;
  // DebugMode logs: empty, or parallel to `kernels`. An op of an in-place
  // update chain outside every module (an optimizer updating one parameter
  // or its state: each op reads what an earlier one of its chain wrote) has
  // (chain + 1) << 32 | its place in the chain, chains numbered in order of
  // their first op; every other op 0. Comparable across traces: the aligner
  // pairs these ops by it, not by their "<none>/op_N" counter, which other
  // ops without a module (compiled backward ops) shift. Found by
  // AssignUpdateChains (read/debugmode_common.h).
  std::vector<uint64_t> update_chain;

  // Watch mode: one entry per `digest` record, in file order.
  std::vector<StepDigest> digests;
  std::vector<uint64_t> digest_hashes;  // every step's kernel digests, step after step
  std::vector<StringId> digest_names;   // parallel: the launch's kernel name
  // Launches of all steps the shim could not digest (the digests' `lost`).
  uint64_t LostDigests() const {
    uint64_t n = 0;
    for (const StepDigest& d : digests) n += d.lost;
    return n;
  }
  // Parallel to buffers when some buffer has Fingerprint::kPrintedStats,
  // else empty: what the log printed for it.
  std::vector<PrintedStats> printed;
  // Records of this trace's importer skipped as bad (read/importer.h): each
  // counter's name and description come from the importer's table row.
  struct Skipped {
    std::string_view name, description;
    bool data_loss = true;  // values were lost, not only records without any
    uint64_t count = 0;
    uint64_t first_line = 0;
  };
  std::vector<Skipped> skipped;
  uint64_t SkippedCount(std::string_view name) const {
    for (const Skipped& s : skipped) {
      if (s.name == name) return s.count;
    }
    return 0;
  }

  std::span<const Buffer> BuffersOf(const Kernel& k) const {
    return {buffers.data() + k.first_buffer, k.buffer_count};
  }
  std::string_view Name(const Kernel& k) const { return strings.View(k.name); }
  std::string_view Demangled(const Kernel& k) const { return strings.View(k.demangled); }
  // How reports name a record in full: an operator by its recorded name
  // (module path and op), a kernel by its demangled name.
  std::string_view DisplayName(const Kernel& k) const {
    return k.level == RecordLevel::kOp ? Name(k) : Demangled(k);
  }
  // What the capture recorded (header capture.level; kernels when unsaid):
  // a watch trace's digests are of operator calls or of kernel launches.
  CaptureLevel capture_level() const {
    return header.capture && header.capture->level ? *header.capture->level : CaptureLevel::kKernels;
  }
  // Whether a kernel left a NaN or Inf in some buffer it wrote.
  bool HasNonfiniteOutput(const Kernel& k) const {
    for (const Buffer& b : BuffersOf(k)) {
      if (b.IsOutput() && b.HasNonfinite()) return true;
    }
    return false;
  }
  // Provenance of a kernel of this trace: nullopt / kNone when it had none.
  const KernelProvenance* ProvenanceOf(const Kernel& k) const {
    if (provenance.empty()) return nullptr;
    const size_t i = static_cast<size_t>(&k - kernels.data());
    return i < provenance.size() ? &provenance[i] : nullptr;
  }
  std::optional<std::string_view> Scope(const Kernel& k) const {
    const KernelProvenance* p = ProvenanceOf(k);
    if (p == nullptr || p->scope == kNoString) return std::nullopt;
    return strings.View(p->scope);
  }
  std::optional<std::string_view> Op(const Kernel& k) const {
    const KernelProvenance* p = ProvenanceOf(k);
    if (p == nullptr || p->op == kNoString) return std::nullopt;
    return strings.View(p->op);
  }
  std::optional<std::string_view> Src(const Kernel& k) const {
    const KernelProvenance* p = ProvenanceOf(k);
    if (p == nullptr || p->src == kNoString) return std::nullopt;
    return strings.View(p->src);
  }
  Phase PhaseOf(const Kernel& k) const {
    const KernelProvenance* p = ProvenanceOf(k);
    return p == nullptr ? Phase::kNone : p->phase;
  }
  // Records a kernel's provenance (call right after pushing it to `kernels`).
  void SetProvenance(size_t kernel, const KernelProvenance& p) {
    if (p.scope == kNoString && p.op == kNoString && p.phase == Phase::kNone && p.src == kNoString &&
        provenance.empty()) {
      return;
    }
    if (provenance.size() < kernels.size()) provenance.resize(kernels.size());
    provenance[kernel] = p;
  }
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_MODEL_TRACE_H_
