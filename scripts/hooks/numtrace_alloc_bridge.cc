// numtrace allocator bridge: PyTorch's caching allocator -> libnumtrace's tensor map.
//
// Compiled AT RUN TIME by numtrace_tensor_map.py against the job's own torch
// headers and libraries (so it is ABI-correct for whatever torch the job
// has), loaded with ctypes and deleted from disk; never built by CMake and
// never part of the product's binaries.
//
// Why: under PyTorch's default caching allocator one cudaMalloc holds many
// tensors, so the driver's allocations do not say where a tensor begins and
// ends. The allocator itself knows: every block it hands out or takes back
// goes through its trace trackers. We attach one that forwards each event to
// numtrace_tensor_event() (shim/api/numtrace.h), so the job keeps its own
// allocator (CUDA graph trees, MemPool and symmetric memory refuse
// cudaMallocAsync).
//
// The tracker runs under the allocator's mutex, on whichever thread
// allocates: it must not call Python or torch, take locks of ours, allocate
// or throw. It reads four fields and calls a C function pointer.
#include <c10/cuda/CUDACachingAllocator.h>

#include <cstddef>
#include <cstdio>
#include <exception>

namespace {

// numtrace_tensor_event(action, device, address, bytes); see shim/api/numtrace.h.
using EventFn = int (*)(int, int, unsigned long long, unsigned long long);

// The c10::cuda::CUDACachingAllocator names work for both homes of
// TraceEntry: c10/core/CachingDeviceAllocator.h (torch 2.15, re-exported by
// a using-declaration) and CUDACachingAllocator.h (older torch).
using c10::cuda::CUDACachingAllocator::TraceEntry;

// One TraceEntry -> at most one numtrace_tensor_event call. ALLOC's size_ is
// the requested (unrounded) size, the tensor's own extent. FREE_REQUESTED is
// skipped: a block freed while another stream still uses it (record_stream)
// stays live until FREE_COMPLETED. SNAPSHOT, OOM (addr_ is a byte count
// there), ANNOTATE and any action a later torch adds carry no block.
void forward_entry(EventFn fn, const TraceEntry& e) noexcept {
  int action;
  switch (e.action_) {
    case TraceEntry::ALLOC: action = 0; break;
    case TraceEntry::FREE_COMPLETED: action = 1; break;
    case TraceEntry::SEGMENT_ALLOC:
    case TraceEntry::SEGMENT_MAP: action = 2; break;
    case TraceEntry::SEGMENT_FREE:
    case TraceEntry::SEGMENT_UNMAP: action = 3; break;
    default: return;
  }
  fn(action, static_cast<int>(e.device_), static_cast<unsigned long long>(e.addr_),
     static_cast<unsigned long long>(e.size_));
}

void set_error(char* error, size_t error_size, const char* what) {
  if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s", what);
}

// The tracker as the allocator stores it. The lambda captures one pointer,
// so std::function keeps it inline: calling it allocates nothing.
c10::cuda::CUDACachingAllocator::AllocatorTraceTracker make_tracker(EventFn fn) {
  return [fn](const TraceEntry& e) { forward_entry(fn, e); };
}

}  // namespace

// Attaches the tracker to the CUDA caching allocator of every device. Call
// once CUDA is initialized (the allocator has its per-device state then) and
// only under the native backend. Returns 0, or -1 with the reason in error.
extern "C" int numtrace_bridge_attach(void* event_fn, char* error, size_t error_size) {
  if (event_fn == nullptr) {
    set_error(error, error_size, "no numtrace_tensor_event function");
    return -1;
  }
  try {
    c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker(
        make_tracker(reinterpret_cast<EventFn>(event_fn)));
    return 0;
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
  } catch (...) {
    set_error(error, error_size, "unknown C++ exception from attachAllocatorTraceTracker");
  }
  return -1;
}

#ifdef NUMTRACE_BRIDGE_TEST
#include <cstring>

// For the CPU test only: builds a real TraceEntry with this torch's own
// constructor and runs it through the tracker numtrace_bridge_attach would
// attach, so the mapping is checked against the real type and enum. The
// action is named as the enum names it (the test never guesses its values).
// The constructor's argument list is torch 2.15's (older torch lacks the
// mempool argument). Returns 0, or -1 for a name not in the table.
extern "C" int numtrace_bridge_test_feed(void* event_fn, const char* action, int device,
                                         unsigned long long address, unsigned long long bytes) {
  static const struct {
    const char* name;
    TraceEntry::Action value;
  } kActions[] = {
      {"ALLOC", TraceEntry::ALLOC},
      {"FREE_REQUESTED", TraceEntry::FREE_REQUESTED},
      {"FREE_COMPLETED", TraceEntry::FREE_COMPLETED},
      {"SEGMENT_ALLOC", TraceEntry::SEGMENT_ALLOC},
      {"SEGMENT_FREE", TraceEntry::SEGMENT_FREE},
      {"SEGMENT_MAP", TraceEntry::SEGMENT_MAP},
      {"SEGMENT_UNMAP", TraceEntry::SEGMENT_UNMAP},
      {"SNAPSHOT", TraceEntry::SNAPSHOT},
      {"OOM", TraceEntry::OOM},
      {"ANNOTATE", TraceEntry::ANNOTATE},
  };
  for (const auto& a : kActions) {
    if (std::strcmp(a.name, action) != 0) continue;
    TraceEntry entry(a.value, static_cast<c10::DeviceIndex>(device), static_cast<size_t>(address),
                     static_cast<size_t>(bytes), nullptr, c10::MempoolId_t{0, 0}, c10::approx_time_t{0});
    make_tracker(reinterpret_cast<EventFn>(event_fn))(entry);
    return 0;
  }
  return -1;
}
#endif
