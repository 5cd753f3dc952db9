// File: shim/cupti/kernel_activity.cc
//
// CUPTI activity glue of the kernel activity check; see kernel_activity.h.
#include "shim/cupti/kernel_activity.h"

#include <cstdlib>
#include <string>

#include "shim/cupti/check.h"
#include "shim/log/log.h"
#include "shim/cupti/cupti_api.h"
#include "shim/engine/capture_counters.h"

namespace numtrace::shim {
namespace {

// CUPTI's buffer callbacks carry no user pointer: one live instance.
std::atomic<KernelActivity*> g_activity{nullptr};

// One stderr line, and the same as a note in the trace.
void Say(EventSink* sink, const std::string& msg) {
  log::Warn("{}", msg);
  if (sink != nullptr) sink->OnWarning(msg);
}

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API,
};

}  // namespace

KernelActivity::KernelActivity(const CuptiApi& api, KernelActivityCheck* check)
    : api_(api), check_(check) {
  g_activity.store(this, std::memory_order_release);
}

KernelActivity::~KernelActivity() {
  KernelActivity* self = this;
  g_activity.compare_exchange_strong(self, nullptr);
}

void KernelActivity::Unavailable(const char* what, int code) {
  unavailable_.store(true, std::memory_order_relaxed);
  CaptureCounters::Get().Set(Counter::kActivityUnavailable, 1);
  log::Warn("CUPTI kernel activity records unavailable ({}, error {}); kernels that run "
            "unmeasured cannot be counted (footer counter activity_unavailable)",
            what, code);
}

bool KernelActivity::Open() {
  std::lock_guard<std::mutex> lock(mu_);
  // After Finish (exit) a late writer tick must not enable it again.
  if (unavailable_.load(std::memory_order_relaxed) || finished_.load(std::memory_order_relaxed)) {
    return false;
  }
  if (open_.load(std::memory_order_relaxed)) return true;
  if (!api_.has_activity()) {
    Unavailable("this libcupti lacks the activity functions", 0);
    return false;
  }
  if (!registered_.load(std::memory_order_acquire)) {
    CUptiResult r = api_.cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted);
    if (r != CUPTI_SUCCESS) {
      Unavailable("cuptiActivityRegisterCallbacks", static_cast<int>(r));
      return false;
    }
    registered_.store(true, std::memory_order_release);
  }
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    CUptiResult r = api_.cuptiActivityEnable(kKinds[i]);
    if (r != CUPTI_SUCCESS) {
      for (size_t j = 0; j < i; ++j) api_.cuptiActivityDisable(kKinds[j]);
      Unavailable(i == 0 ? "cuptiActivityEnable(CONCURRENT_KERNEL)"
                         : "cuptiActivityEnable(INTERNAL_LAUNCH_API)",
                  static_cast<int>(r));
      return false;
    }
  }
  open_.store(true, std::memory_order_relaxed);
  return true;
}

void KernelActivity::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_.load(std::memory_order_relaxed)) return;
  for (CUpti_ActivityKind k : kKinds) NUMTRACE_CUPTI_CHECK(api_.cuptiActivityDisable(k));
  open_.store(false, std::memory_order_relaxed);
}

// Flushes hold no lock: CUPTI's flush may wait for a thread that is inside
// a callback, and no callback path takes anything held here.
void KernelActivity::Finish(EventSink* sink) {
  finished_.store(true, std::memory_order_relaxed);
  if (registered_.load(std::memory_order_acquire)) {
    NUMTRACE_CUPTI_CHECK(api_.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    // A forced flush hands every buffer back to whoever is registered now:
    // one of ours still out, with launches noted since the last came back,
    // went to another tool with their records.
    bool out;
    {
      std::lock_guard<std::mutex> lock(buffers_mu_);
      out = !lent_.empty();
    }
    if (out && check_->notes_total() > notes_at_return_.load(std::memory_order_acquire)) Taken(sink);
  }
  Close();
  Report(sink);
  Watch(sink);
}

void KernelActivity::StepEnded(EventSink* sink) {
  if (!registered_.load(std::memory_order_acquire)) return;
  NUMTRACE_CUPTI_CHECK(api_.cuptiActivityFlushAll(0));
  Report(sink);
  Watch(sink);
  const uint64_t traffic = traffic_.load(std::memory_order_acquire);
  const uint64_t notes = check_->notes_total();
  if (traffic != traffic_at_) {
    silent_ = 0;
  } else if (notes != notes_at_ && traffic_at_ > 0 && ++silent_ == kSilentStepEnds) {
    Taken(sink);
  }
  traffic_at_ = traffic;
  notes_at_ = notes;
}

void KernelActivity::Watch(EventSink* sink) {
  if (!foreign_.load(std::memory_order_acquire) || said_foreign_.exchange(true)) return;
  Say(sink,
      "a CUPTI activity buffer numtrace did not allocate came back to it: another tool "
      "(torch.profiler's kineto?) had registered CUPTI's process-wide activity buffers first, and "
      "gets no GPU kernel records from here on; set NUMTRACE_ACTIVITY=0 to leave them to it");
}

void KernelActivity::Taken(EventSink* sink) {
  if (said_taken_.exchange(true)) return;
  CaptureCounters::Get().Set(Counter::kActivityUnavailable, 1);
  Say(sink,
      "CUPTI kernel activity records stopped reaching numtrace: another tool registered its own "
      "activity buffers (torch.profiler's kineto does when a profile starts); kernels that ran "
      "unmeasured are not counted from here on (footer counter activity_unavailable); capture "
      "itself goes on. Profile and capture in separate runs");
}

void KernelActivity::Lend(uint8_t* buffer) {
  std::lock_guard<std::mutex> lock(buffers_mu_);
  lent_.insert(buffer);
  traffic_.fetch_add(1, std::memory_order_release);
}

bool KernelActivity::TakeBack(uint8_t* buffer) {
  {
    std::lock_guard<std::mutex> lock(buffers_mu_);
    if (lent_.erase(buffer) == 0) return false;
  }
  notes_at_return_.store(check_->notes_total(), std::memory_order_release);
  traffic_.fetch_add(1, std::memory_order_release);
  return true;
}

void KernelActivity::Report(EventSink* sink) {
  for (const KernelActivityCheck::Unmeasured& u : check_->Settle()) {
    CaptureCounters::Get().Add(u.in_graph ? Counter::kKernelsInGraphs : Counter::kKernelsUnmeasured,
                               u.count);
    if (sink != nullptr) sink->OnUnmeasured(u.name, u.count, u.in_graph);
  }
  CaptureCounters::Get().Add(Counter::kKernelsLate, check_->TakeLate());
}

void KernelActivity::ReadBuffer(uint8_t* buffer, size_t valid_bytes) {
  if (buffer == nullptr || valid_bytes == 0 || api_.cuptiActivityGetNextRecord == nullptr) return;
  CUpti_Activity* record = nullptr;
  while (api_.cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS &&
         record != nullptr) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      // correlationId, name and graphId sit at the same offsets in every
      // CUpti_ActivityKernel version (fields are only appended).
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      CaptureCounters::Get().Add(Counter::kActivityKernels);
      check_->OnKernel(k->correlationId, k->name != nullptr ? k->name : "", k->graphId != 0);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API) {
      CaptureCounters::Get().Add(Counter::kActivityInternalLaunches);
    }
  }
}

void CUPTIAPI KernelActivity::BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  // CUPTI wants 8-byte aligned buffers.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
  KernelActivity* self = g_activity.load(std::memory_order_acquire);
  if (self != nullptr && *buffer != nullptr) self->Lend(*buffer);
}

void CUPTIAPI KernelActivity::BufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer,
                                              size_t size, size_t valid) {
  KernelActivity* self = g_activity.load(std::memory_order_acquire);
  // Without its instance nothing says whose the buffer is: kept, not freed.
  if (self == nullptr) return;
  const bool ours = self->TakeBack(buffer);
  // Records are records, whoever lent the buffer.
  self->ReadBuffer(buffer, valid);
  size_t dropped = 0;
  if (self->api_.cuptiActivityGetNumDroppedRecords != nullptr &&
      self->api_.cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    CaptureCounters::Get().Add(Counter::kActivityDropped, dropped);
  }
  // Another tool's buffer is its own memory (kineto frees it with its
  // profile): freeing it here would free it twice.
  if (ours) {
    std::free(buffer);
  } else {
    self->foreign_.store(true, std::memory_order_release);
  }
}

}  // namespace numtrace::shim
