// File: shim/device/cuda_dump_copier.cc
//
// Tensor dump copies on the GPU (cuda_dump_copier.h), and CudaDevice's two
// Device methods that forward to them (kept here so cuda_device.cc stays
// about the reductions).
#include "shim/device/cuda_dump_copier.h"

#include <chrono>
#include <thread>
#include <vector>

#include <cuda.h>

#include "shim/driver/check.h"
#include "shim/driver/driver_api.h"
#include "shim/driver/relaxed_capture_scope.h"
#include "shim/driver/self_call_guard.h"
#include "shim/device/cuda_device.h"
#include "shim/engine/capture_counters.h"
#include "shim/log/log.h"

namespace numtrace::shim {

bool CudaDumpCopier::Enqueue(uint64_t stream, std::span<const MeasureItem> items, uint64_t ticket) {
  SelfCallGuard guard;  // our copies must not reach our own callbacks
  RelaxedCaptureScope relaxed(api_);
  auto* s = reinterpret_cast<CUstream>(stream);
  Copy c;
  c.ticket = ticket;
  // The launch's context is its stream's, as for the reductions
  // (CudaDevice::ContextForStreamLocked); the current one only as a fallback.
  CUcontext ctx = nullptr;
  if (api_.cuStreamGetCtx == nullptr || api_.cuStreamGetCtx(s, &ctx) != CUDA_SUCCESS || ctx == nullptr) {
    if (!NUMTRACE_CU_CHECK(api_.cuCtxGetCurrent(&ctx)) || ctx == nullptr) return false;
  }
  c.context = ctx;
  bool queued_any = false;
  for (const MeasureItem& item : items) {
    Item it;
    it.bytes = item.bytes;
    void* host = nullptr;
    if (item.bytes != 0) {
      if (!NUMTRACE_CU_CHECK(api_.cuMemHostAlloc(&host, item.bytes, 0))) {
        c.ok = false;
        c.items.push_back(it);
        continue;
      }
      it.host = static_cast<uint8_t*>(host);
      if (NUMTRACE_CU_CHECK(api_.cuMemcpyDtoHAsync_v2(host, item.address, item.bytes, s))) {
        queued_any = true;
      } else {
        c.ok = false;
      }
    }
    c.items.push_back(it);
  }
  CUevent event = nullptr;
  const bool recorded = NUMTRACE_CU_CHECK(api_.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING)) &&
                        NUMTRACE_CU_CHECK(api_.cuEventRecord(event, s));
  if (!recorded) {
    if (queued_any) {
      // Copies may still be writing into the pinned memory and there is no
      // event to tell when they end: keep it (leaked) rather than free it
      // under them, and report the dump as failed.
      if (event != nullptr) api_.cuEventDestroy_v2(event);
      return false;
    }
    if (event != nullptr) api_.cuEventDestroy_v2(event);
    c.event = nullptr;
    Release(c);
    return false;
  }
  c.event = event;
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.push_back(std::move(c));
  return true;
}

void CudaDumpCopier::Release(Copy& c) {
  for (Item& it : c.items) {
    if (it.host != nullptr) api_.cuMemFreeHost(it.host);
    it.host = nullptr;
  }
  if (c.event != nullptr) api_.cuEventDestroy_v2(static_cast<CUevent>(c.event));
  c.event = nullptr;
}

void CudaDumpCopier::Poll(const Device::CopyFn& fn) {
  SelfCallGuard guard;
  RelaxedCaptureScope relaxed(api_);  // cuEventQuery must not break another thread's global capture
  std::vector<Copy> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
      // Events are queried in the context they were recorded in.
      const bool pushed = NUMTRACE_CU_CHECK(api_.cuCtxPushCurrent_v2(static_cast<CUcontext>(it->context)));
      const CUresult r = api_.cuEventQuery(static_cast<CUevent>(it->event));
      if (pushed) {
        CUcontext popped = nullptr;
        api_.cuCtxPopCurrent_v2(&popped);
      }
      if (r == CUDA_ERROR_NOT_READY) {
        ++it;
        continue;
      }
      if (r != CUDA_SUCCESS) {
        NUMTRACE_CU_CHECK(r);
        it->ok = false;
      }
      done.push_back(std::move(*it));
      it = in_flight_.erase(it);
    }
  }
  // Outside the lock: fn writes files.
  for (Copy& c : done) {
    for (size_t i = 0; i < c.items.size(); ++i) {
      const Item& it = c.items[i];
      const bool failed = !c.ok || (it.bytes != 0 && it.host == nullptr);
      fn(c.ticket, i, failed ? std::span<const uint8_t>() : std::span<const uint8_t>(it.host, it.bytes), failed);
    }
    const bool pushed = NUMTRACE_CU_CHECK(api_.cuCtxPushCurrent_v2(static_cast<CUcontext>(c.context)));
    Release(c);
    if (pushed) {
      CUcontext popped = nullptr;
      api_.cuCtxPopCurrent_v2(&popped);
    }
  }
}

size_t CudaDumpCopier::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_.size();
}

bool CudaDevice::EnqueueCopy(uint64_t stream, std::span<const MeasureItem> items, uint64_t ticket) {
  // The same rule as for reductions: never read a range the driver does not
  // confirm (a copy of an unconfirmed buffer is of zero bytes, and the
  // dump's hash check then says so). Dumps are rare: a local vector is fine.
  std::vector<MeasureItem> confirmed;
  ConfirmRanges(items, ContextDevice(StreamContext(reinterpret_cast<void*>(stream))), &confirmed);
  return dump_copier_.Enqueue(stream, confirmed, ticket);
}

void CudaDevice::PollCopies(const CopyFn& fn, bool wait) {
  // At exit the copies are polled until options.exit_wait has passed, like
  // the reductions (Drain): never a blocking wait.
  dump_copier_.Poll(fn);
  if (!wait) return;
  const auto deadline = std::chrono::steady_clock::now() + options_.exit_wait;
  while (dump_copier_.in_flight() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      CaptureCounters::Get().Add(Counter::kExitWaitExpired);
      log::Warn("gave up waiting for {} tensor dump copies after {} s (NUMTRACE_EXIT_WAIT); those "
                "dumps have no sidecar (counter exit_wait_expired)",
                dump_copier_.in_flight(), options_.exit_wait.count() / 1000.0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    dump_copier_.Poll(fn);
  }
}

}  // namespace numtrace::shim
