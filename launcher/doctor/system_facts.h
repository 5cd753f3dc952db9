// File: launcher/doctor/system_facts.h
//
// What `numtrace doctor` learns about the machine, as plain values, and the
// interface that learns it. The real probe (system_probe.h) asks the
// machine; tests hand the checks (doctor_checks.h) fake facts, so every row
// and every verdict is tested on a machine without a GPU.
#ifndef NUMTRACE_LAUNCHER_DOCTOR_SYSTEM_FACTS_H_
#define NUMTRACE_LAUNCHER_DOCTOR_SYSTEM_FACTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/environment.h"
#include "launcher/install_layout.h"

namespace numtrace::launcher {

struct LibraryFacts {
  bool loads = false;
  std::string version;  // numtrace_version()
  std::string error;    // dlopen's message when it does not load
};

struct GpuFacts {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
};

struct DriverFacts {
  bool found = false;       // libcuda.so.1 loaded
  std::string path;
  std::string error;        // why not found
  int init_result = 0;      // cuInit's CUresult (0: success)
  int version = 0;          // cuDriverGetVersion: 13000 = CUDA 13.0
  std::vector<GpuFacts> gpus;
};

struct CuptiFacts {
  bool found = false;
  std::string path;
  uint32_t version = 0;     // cuptiGetVersion (API version); 0 when unknown
  std::string tried;        // candidates and why they failed
};

struct SubscriberFacts {
  bool ran = false;         // the CUDA child ran
  bool held = false;        // another CUPTI client held the process
  std::string message;      // the library's own line, or why the child failed
  // From the footer of the child's trace (it launches a small kernel 4
  // times): how many launches had no parameter layout (then no buffers).
  bool layouts_known = false;
  uint64_t launches_seen = 0, launches_no_layout = 0;
};

struct PythonFacts {
  bool python = false;      // an interpreter ran
  std::string interpreter;
  std::string torch_version;   // empty: not importable
  std::string torch_error;
  bool torch_cuda = false;
  std::string triton_version;  // empty: not importable
  bool step_hook = false;      // the optimizer step hook is registered
  bool triton_hook = false;    // Triton's CompiledKernel is wrapped
  std::string error;
  // The tensor map's bridge built against this torch (its build_check):
  // "ok: ..." or "failed: why" (empty: not tried - no torch).
  std::string bridge;
};

class SystemProbe {
 public:
  virtual ~SystemProbe() = default;
  virtual LibraryFacts Library(const InstallLayout& layout) = 0;
  virtual DriverFacts Driver() = 0;
  virtual CuptiFacts Cupti(const Environment& env) = 0;
  // Starts a tiny CUDA program under the library; only asked when a GPU is there.
  virtual SubscriberFacts Subscriber(const InstallLayout& layout, const Environment& env) = 0;
  virtual PythonFacts Python(const InstallLayout& layout, const Environment& env) = 0;
};

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_DOCTOR_SYSTEM_FACTS_H_
