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

struct Buffer {
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint32_t arg = 0;
  DType dtype = DType::kRaw;
  DTypeSource dtype_from = DTypeSource::kDefault;
  Role role = Role::kUnknown;
  bool has_pre = false;   // `pre` was recorded: pre_hash is its hash
  uint64_t pre_hash = 0;  // hash of the contents before the launch (an input)
  BufferStats stats;
  // Operator-level records (docs/format.md): the tensor's shape as written
  // compactly ("[2,3]") and its device ("cpu", "cuda:0"); kNoString when absent.
  StringId shape = kNoString;
  StringId device = kNoString;
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
  bool op_level = false;           // `level` "op": a framework operator call, not a launch
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

// DebugMode logs only: the values the log wrote for one buffer, as written
// (non-finite included), and which of them it wrote. A log's L1 is a norm
// rounded to 7 significant digits, not a hash of the bytes, so the judge
// compares these (judge/debugmode_compare.h) rather than `stats.hash`.
struct LoggedStats {
  enum Bit : uint8_t { kL1 = 1, kL2 = 2, kMin = 4, kMax = 8, kMean = 16 };
  double l1 = 0, l2 = 0, min = 0, max = 0, mean = 0;
  uint8_t has = 0;  // Bit set
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

// What produced the trace; DebugMode logs carry an L1-norm "hash", not a hash
// of the bytes, so equal "hashes" there mean equal L1 norms.
enum class TraceSource : uint8_t { kNumtrace, kDebugMode };

struct Trace {
  std::string path;
  std::string label;   // run.label from the header, else the file name
  int64_t rank = 0;    // from the header, else the file name, else 0
  TraceSource source = TraceSource::kNumtrace;
  TraceHeader header;
  bool truncated = false;                // no footer: the process was cut short
  std::optional<FooterRecord> footer;
  uint64_t ignored_lines = 0;            // unknown record types (forward compatibility)
  std::vector<NoteRecord> notes;

  StringPool strings;
  std::vector<Kernel> kernels;  // in seq order, kernels[i].seq == i for our traces
  std::vector<Buffer> buffers;  // all kernels' buffers, each kernel's contiguous
  // Empty when no kernel had provenance, else parallel to `kernels`.
  std::vector<KernelProvenance> provenance;

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
  // DebugMode logs only (empty for our traces): per buffer what the log
  // wrote, per kernel whether it was a hash-only block (an in-place op or a
  // small tensor: hashes, no Shape). The block's phase is its provenance.
  std::vector<LoggedStats> logged;   // parallel to buffers
  std::vector<uint8_t> hash_only;    // parallel to kernels

  std::span<const Buffer> BuffersOf(const Kernel& k) const {
    return {buffers.data() + k.first_buffer, k.buffer_count};
  }
  std::string_view Name(const Kernel& k) const { return strings.View(k.name); }
  std::string_view Demangled(const Kernel& k) const { return strings.View(k.demangled); }
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
