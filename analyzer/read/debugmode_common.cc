#include "analyzer/read/debugmode_common.h"

#include <new>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/read/line_reader.h"
#include "analyzer/read/trace_file_name.h"
#include "common/format/provenance.h"

namespace numtrace::analyzer {

Trace StartDebugModeTrace(std::string_view path, std::string_view producer) {
  Trace trace;
  trace.path = std::string(path);
  trace.header.producer = std::string(producer);
  trace.records_environment = false;
  trace.records_launches = false;
  trace.flow = FlowKey::kHashChain;
  trace.label = std::string(FileStem(path));
  trace.rank = RankFromFileName(path).value_or(0);
  return trace;
}

void ReserveDebugModeTrace(Trace* trace, uint64_t records, uint64_t buffers) {
  ReserveForSize(trace, records, buffers);
  try {
    trace->printed.reserve(trace->buffers.capacity());
  } catch (const std::bad_alloc&) {
    // Estimates only: the vectors grow as needed.
  }
}

void FinishDebugModeTrace(Trace* trace) {
  ReleaseUnusedReserve(trace);
  AssignUpdateChains(trace);
}

DebugModeRecord::DebugModeRecord(Trace* trace, RecordLevel level, StringId name, StringId demangled)
    : trace_(trace) {
  kernel_.level = level;
  kernel_.name = name;
  kernel_.demangled = demangled;
  kernel_.first_buffer = static_cast<uint32_t>(trace->buffers.size());
}

void DebugModeRecord::Push(const DebugModeOrigin& origin) {
  kernel_.seq = trace_->kernels.size();
  kernel_.buffer_count = static_cast<uint32_t>(trace_->buffers.size() - kernel_.first_buffer);
  trace_->kernels.push_back(kernel_);
  KernelProvenance prov;
  if (origin.scope) prov.scope = trace_->strings.Intern(CapUtf8(*origin.scope));
  if (!origin.op.empty()) prov.op = trace_->strings.Intern(CapUtf8(origin.op));
  if (!origin.src.empty()) prov.src = trace_->strings.Intern(CapUtf8(origin.src));
  prov.phase = origin.phase;
  trace_->SetProvenance(trace_->kernels.size() - 1, prov);
}

void AssignUpdateChains(Trace* trace) {
  // A hash that identifies a value: not absent, not zero (+0.0 or -0.0 as a
  // printed norm, 0 as hash_tensor).
  auto linkable = [](const Buffer& b) { return b.stats.hash != 0 && !(b.Has(kPrintedStats) && b.stats.l1 == 0); };
  absl::flat_hash_map<uint64_t, uint32_t> chain_of_output;  // output hash -> chain
  std::vector<uint32_t> length;                              // ops so far, by chain
  std::vector<uint64_t> keys(trace->kernels.size(), 0);
  for (size_t i = 0; i < trace->kernels.size(); ++i) {
    const Kernel& k = trace->kernels[i];
    // Outside every module, in forward (the text log's phase of everything
    // not backward) or the optimizer: not backward, nor a JSON log's ops of
    // no phase (backward's, the loss's).
    const Phase phase = trace->PhaseOf(k);
    if (k.level != RecordLevel::kOp || trace->Scope(k) || (phase != Phase::kForward && phase != Phase::kOptimizer)) {
      continue;
    }
    std::optional<uint32_t> chain;
    for (const Buffer& b : trace->BuffersOf(k)) {
      if (b.role != Role::kIn || !linkable(b)) continue;
      if (auto it = chain_of_output.find(b.stats.hash); it != chain_of_output.end()) {
        chain = it->second;
        break;
      }
    }
    if (!chain) {
      const std::optional<std::string_view> op = trace->Op(k);
      if (!op || !op->ends_with('_')) continue;
      chain = static_cast<uint32_t>(length.size());
      length.push_back(0);
    }
    keys[i] = (uint64_t{*chain} + 1) << 32 | length[*chain]++;
    for (const Buffer& b : trace->BuffersOf(k)) {
      if (b.IsOutput() && linkable(b)) chain_of_output[b.stats.hash] = *chain;
    }
  }
  if (!length.empty()) trace->update_chain = std::move(keys);
}

std::string_view WithoutRootClass(std::string_view fqn) {
  // ModTracker's names start with the root module's class ("Llama3Model",
  // "FSDPLlama3Model"); PyTorch FQNs (named_modules) do not. A first
  // component starting with an upper-case letter is that class name.
  const size_t dot = fqn.find('.');
  const std::string_view first = fqn.substr(0, dot);
  if (!first.empty() && first[0] >= 'A' && first[0] <= 'Z') {
    return dot == std::string_view::npos ? std::string_view() : fqn.substr(dot + 1);
  }
  return fqn;
}

}  // namespace numtrace::analyzer
