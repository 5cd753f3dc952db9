// The C entry points of shim/api/numtrace.h, forwarding to the Runtime.
#include "shim/api/numtrace.h"

#include <memory>
#include <string>
#include <vector>

#include "common/numeric/element_decode.h"
#include "common/version/version.h"
#include "shim/cupti/measurement_pause.h"
#include "shim/device/host_device.h"
#include "common/settings/modes.h"
#include "shim/engine/provenance.h"
#include "shim/engine/runtime.h"
#include "shim/log/log.h"

#define NUMTRACE_EXPORT __attribute__((visibility("default")))

using numtrace::shim::EventSink;
using numtrace::shim::Runtime;

extern "C" {

NUMTRACE_EXPORT int numtrace_mark_step(void) { return Runtime::Get().MarkStep() ? 1 : 0; }

NUMTRACE_EXPORT int numtrace_mark_step_to(long long next) { return Runtime::Get().MarkStep(next) ? 1 : 0; }

NUMTRACE_EXPORT int numtrace_capture_begin(void) {
  EventSink* sink = Runtime::Get().sink();
  if (sink == nullptr) return 0;
  sink->OnCaptureBegin();
  return 1;
}

NUMTRACE_EXPORT int numtrace_capture_end(void) {
  EventSink* sink = Runtime::Get().sink();
  if (sink == nullptr) return 0;
  sink->OnCaptureEnd();
  return 1;
}

NUMTRACE_EXPORT int numtrace_annotate_kernel(const char* name, const char* dtypes) {
  // Off (NUMTRACE_ENABLE=0) or badly configured: silent, nothing to keep.
  if (!Runtime::Get().Configure()) return 0;
  if (name == nullptr || dtypes == nullptr) {
    numtrace::shim::log::Error("numtrace_annotate_kernel: name and dtypes must not be NULL");
    return -1;
  }
  std::string error;
  if (!Runtime::Get().Annotate(name, dtypes, &error)) {
    numtrace::shim::log::Error("{}", error);
    return -1;
  }
  return 0;
}

// Provenance calls: inactive -> 0 and nothing kept, so a job that never
// starts CUDA (or runs with numtrace off) pays one atomic load per call.
namespace provenance = numtrace::shim::provenance;
static bool Active() { return Runtime::Get().sink() != nullptr; }

NUMTRACE_EXPORT int numtrace_scope_push(const char* fqn) {
  if (!Active()) return 0;
  if (fqn == nullptr) return -1;
  provenance::PushScope(fqn);
  return 1;
}

NUMTRACE_EXPORT int numtrace_scope_pop(void) {
  if (!Active()) return 0;
  return provenance::PopScope() ? 1 : -1;
}

NUMTRACE_EXPORT int numtrace_op_push(const char* op) {
  if (!Active()) return 0;
  if (op == nullptr) return -1;
  provenance::PushOp(op);
  return 1;
}

NUMTRACE_EXPORT int numtrace_op_pop(void) {
  if (!Active()) return 0;
  return provenance::PopOp() ? 1 : -1;
}

NUMTRACE_EXPORT int numtrace_set_phase(const char* phase) {
  if (!Active()) return 0;
  if (phase == nullptr) return -1;
  return provenance::SetPhase(std::string_view(phase)) ? 1 : -1;
}

NUMTRACE_EXPORT int numtrace_set_src(const char* src) {
  if (!Active()) return 0;
  if (src == nullptr) return -1;
  provenance::SetSrc(src);
  return 1;
}

NUMTRACE_EXPORT int numtrace_annotate_kernel_ops(const char* name, const char* ops) {
  if (!Runtime::Get().Configure()) return 0;
  if (name == nullptr || ops == nullptr || *name == '\0' || *ops == '\0') return -1;
  provenance::SetKernelOps(name, ops);
  return 1;
}

NUMTRACE_EXPORT int numtrace_step_captured(long long step) { return Runtime::Get().StepCaptured(step); }

NUMTRACE_EXPORT int numtrace_tensor_map_wanted(void) {
  return Active() && Runtime::Get().config().allocator == numtrace::settings::AllocatorMode::kCaching ? 1 : 0;
}

NUMTRACE_EXPORT int numtrace_tensor_event(int action, int device, unsigned long long address,
                                          unsigned long long bytes) {
  EventSink* sink = Runtime::Get().sink();
  if (sink == nullptr) return 0;
  using numtrace::shim::TensorAction;
  if (action < 0 || action > static_cast<int>(TensorAction::kSegmentFree)) return -1;
  const auto a = static_cast<TensorAction>(action);
  if (bytes == 0 && (a == TensorAction::kAlloc || a == TensorAction::kSegmentAlloc)) return -1;
  sink->OnTensorEvent({a, device, address, bytes});
  return 1;
}

NUMTRACE_EXPORT int numtrace_tensor_map_status(int state, const char* detail) {
  EventSink* sink = Runtime::Get().sink();
  if (sink == nullptr) return 0;
  using numtrace::shim::TensorMapState;
  if (state < 0 || state > static_cast<int>(TensorMapState::kNotNeeded)) return -1;
  sink->OnTensorMapStatus(static_cast<TensorMapState>(state),
                          detail != nullptr ? std::string_view(detail) : std::string_view());
  return 1;
}

NUMTRACE_EXPORT int numtrace_set_environment(const char* key, const char* value) {
  if (!Runtime::Get().Configure()) return 0;
  if (key == nullptr || value == nullptr || key[0] == '\0') {
    numtrace::shim::log::Error("numtrace_set_environment: key and value must not be NULL, the key not empty");
    return -1;
  }
  const std::string_view k(key), v(value);
  if (k.size() > 128 || v.size() > 4096) {
    numtrace::shim::log::Error("numtrace_set_environment: {} is over the limit (key 128 bytes, value 4096)",
                               k.substr(0, 128));
    return -1;
  }
  Runtime::Get().AddEnvironment({{std::string(k), std::string(v)}});
  return 0;
}

NUMTRACE_EXPORT int numtrace_pause(void) {
  numtrace::shim::MeasurementPause::Push();
  return numtrace_is_active();
}

NUMTRACE_EXPORT int numtrace_resume(void) {
  numtrace::shim::MeasurementPause::Pop();
  return numtrace_is_active();
}

// Operator level. The tensors are converted into the engine's OpTensor
// view (no copy of shape or data) in this thread's scratch.
namespace {

using numtrace::shim::OpDevice;
using numtrace::shim::OpTensor;

bool ToOpTensors(const numtrace_tensor* tensors, int count, std::vector<OpTensor>* out) {
  out->clear();
  if (count < 0 || (count > 0 && tensors == nullptr)) return false;
  for (int i = 0; i < count; ++i) {
    const numtrace_tensor& t = tensors[i];
    if (t.ndim < 0 || t.ndim > 64 || t.element_size < 1 || t.dtype == nullptr || t.device == nullptr ||
        (t.ndim > 0 && t.shape == nullptr)) {
      return false;
    }
    OpTensor o;
    o.storage = t.storage;
    o.offset = t.offset;
    o.data = t.data;
    o.shape = {reinterpret_cast<const int64_t*>(t.shape), static_cast<size_t>(t.ndim)};
    for (int64_t d : o.shape) {
      if (d < 0) return false;
    }
    if (t.strides != nullptr) o.strides = {reinterpret_cast<const int64_t*>(t.strides), static_cast<size_t>(t.ndim)};
    numtrace::DType dtype = numtrace::DType::kRaw;
    o.dtype = numtrace::ParseDType(t.dtype, &dtype) ? dtype : numtrace::DType::kRaw;
    // A dtype's element size is its own; raw keeps what the caller says.
    o.element_size = static_cast<uint32_t>(t.element_size);
    if (o.dtype != numtrace::DType::kRaw && numtrace::ElementSize(o.dtype) != t.element_size) return false;
    const std::string_view device(t.device);
    if (device == "cpu") {
      o.device = OpDevice::kCpu;
    } else if (device == "cuda" || device.starts_with("cuda:")) {
      o.device = OpDevice::kCuda;
      o.device_index = device.size() > 5 ? std::atoi(t.device + 5) : 0;
    } else {
      o.device = OpDevice::kOther;
      o.device_name = device.substr(0, 64);
    }
    if (t.arg < 0) return false;
    o.arg = static_cast<uint32_t>(t.arg);
    o.written = t.written != 0;
    out->push_back(o);
  }
  return true;
}

std::vector<OpTensor>& OpScratch() {
  thread_local std::vector<OpTensor> v;
  return v;
}

}  // namespace

NUMTRACE_EXPORT int numtrace_op_level(void) {
  return Runtime::Get().StartOps(std::make_unique<numtrace::shim::HostDevice>()) != nullptr ? 1 : 0;
}

NUMTRACE_EXPORT long long numtrace_op_before(const numtrace_tensor* tensors, int count, unsigned long long stream) {
  EventSink* sink = Runtime::Get().sink();
  if (sink == nullptr) return -1;
  std::vector<OpTensor>& v = OpScratch();
  if (!ToOpTensors(tensors, count, &v)) return -1;
  return sink->OnOpBefore(v, stream);
}

NUMTRACE_EXPORT int numtrace_op_after(long long token, const char* name, const numtrace_tensor* tensors, int count,
                                      unsigned long long stream) {
  EventSink* sink = Runtime::Get().sink();
  if (sink == nullptr || token < 0) return 0;
  std::vector<OpTensor>& v = OpScratch();
  if (name == nullptr || !ToOpTensors(tensors, count, &v)) return -1;
  sink->OnOpAfter(token, std::string_view(name).substr(0, 512), v, stream);
  return 1;
}

NUMTRACE_EXPORT int numtrace_cuda_started(void) { return Runtime::Get().cuda_started() ? 1 : 0; }

NUMTRACE_EXPORT const char* numtrace_version(void) { return numtrace::kVersion; }

NUMTRACE_EXPORT int numtrace_is_active(void) { return Runtime::Get().sink() != nullptr ? 1 : 0; }

}  // extern "C"
