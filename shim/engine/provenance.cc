// File: shim/engine/provenance.cc
//
// The per-thread scope/op stacks and phase; see provenance.h.
#include "shim/engine/provenance.h"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "shim/engine/capture_counters.h"

namespace numtrace::shim::provenance {
namespace {

// A stack of names that keeps its strings' capacity when popped, so pushes
// on a warm thread copy into existing storage instead of allocating.
class NameStack {
 public:
  void Push(std::string_view name) {
    if (depth_ < kMaxDepth) {
      const std::string_view kept = CapUtf8(name);
      if (kept.size() != name.size()) CaptureCounters::Get().Add(Counter::kProvenanceCapped);
      if (depth_ == names_.size()) names_.emplace_back();
      names_[depth_].assign(kept.data(), kept.size());
    } else {
      CaptureCounters::Get().Add(Counter::kProvenanceCapped);
    }
    ++depth_;
  }
  bool Pop() {
    if (depth_ == 0) {
      CaptureCounters::Get().Add(Counter::kProvenanceUnmatchedPops);
      return false;
    }
    --depth_;
    return true;
  }
  bool empty() const { return depth_ == 0; }
  // The innermost stored name (past kMaxDepth: the deepest one stored).
  const std::string& top() const { return names_[(depth_ <= kMaxDepth ? depth_ : kMaxDepth) - 1]; }
  void Clear() { depth_ = 0; }

 private:
  std::vector<std::string> names_;
  size_t depth_ = 0;
};

struct ThreadState {
  NameStack scopes, ops;
  Phase phase = Phase::kNone;
  std::string src;
};

ThreadState& State() {
  thread_local ThreadState s;
  return s;
}

}  // namespace

void Stamp::ApplyTo(KernelRecord* r) && {
  r->scope = std::move(scope);
  r->op = std::move(op);
  r->phase = phase;
  r->src = std::move(src);
}

void PushScope(std::string_view fqn) { State().scopes.Push(fqn); }
bool PopScope() { return State().scopes.Pop(); }
void PushOp(std::string_view op) { State().ops.Push(op); }
bool PopOp() { return State().ops.Pop(); }
void SetPhase(Phase phase) { State().phase = phase; }

void SetSrc(std::string_view src) {
  const std::string_view kept = CapUtf8(src);
  if (kept.size() != src.size()) CaptureCounters::Get().Add(Counter::kProvenanceCapped);
  State().src.assign(kept.data(), kept.size());
}

bool SetPhase(std::string_view word) {
  Phase p = Phase::kNone;
  if (!word.empty() && !ParsePhase(word, &p)) return false;
  State().phase = p;
  return true;
}

Stamp Current() {
  const ThreadState& s = State();
  Stamp stamp;
  if (!s.scopes.empty()) stamp.scope = s.scopes.top();
  if (!s.ops.empty()) stamp.op = s.ops.top();
  stamp.phase = s.phase;
  stamp.src = s.src;
  return stamp;
}

bool Any() {
  const ThreadState& s = State();
  return !s.scopes.empty() || !s.ops.empty() || s.phase != Phase::kNone || !s.src.empty();
}

namespace {
struct KernelOps {
  std::atomic<bool> any{false};  // no table lookup at all until a kernel is annotated
  std::mutex mu;
  std::unordered_map<std::string, std::string> by_symbol;
};
KernelOps& Ops() {
  static KernelOps* ops = new KernelOps();  // launches may come during exit
  return *ops;
}
}  // namespace

void SetKernelOps(std::string_view symbol, std::string_view ops) {
  KernelOps& k = Ops();
  const std::string_view kept = CapUtf8(ops);
  if (kept.size() != ops.size()) CaptureCounters::Get().Add(Counter::kProvenanceCapped);
  std::lock_guard<std::mutex> lock(k.mu);
  k.by_symbol[std::string(symbol)] = std::string(kept);
  k.any.store(true, std::memory_order_release);
}

Stamp ForLaunch(std::string_view symbol) {
  Stamp stamp = Current();
  KernelOps& k = Ops();
  if (!k.any.load(std::memory_order_acquire)) return stamp;
  std::lock_guard<std::mutex> lock(k.mu);
  auto it = k.by_symbol.find(std::string(symbol));
  if (it != k.by_symbol.end()) stamp.op = it->second;
  return stamp;
}

void ResetThread() {
  ThreadState& s = State();
  s.scopes.Clear();
  s.ops.Clear();
  s.phase = Phase::kNone;
  s.src.clear();
}

}  // namespace numtrace::shim::provenance
