// File: launcher/doctor/system_probe.h
//
// The real SystemProbe: asks this machine. The library is loaded in a
// forked child (with NUMTRACE_ENABLE=0, so it stays inert) and so is
// Python; the driver is opened with dlopen (no CUDA header, no link to
// libcuda); CUPTI is searched for in the order the shim uses
// (shim/driver/library_finder.h). The subscriber check starts this same
// executable's hidden `__cuda-child` verb under LD_PRELOAD=libnumtrace.so.
#ifndef NUMTRACE_LAUNCHER_DOCTOR_SYSTEM_PROBE_H_
#define NUMTRACE_LAUNCHER_DOCTOR_SYSTEM_PROBE_H_

#include <string>

#include "launcher/doctor/system_facts.h"

namespace numtrace::launcher {

class MachineProbe : public SystemProbe {
 public:
  LibraryFacts Library(const InstallLayout& layout) override;
  DriverFacts Driver() override;
  CuptiFacts Cupti(const Environment& env) override;
  SubscriberFacts Subscriber(const InstallLayout& layout, const Environment& env) override;
  PythonFacts Python(const InstallLayout& layout, const Environment& env) override;
};

// The launch counters of the trace the CUDA child wrote into `dir`, read
// with the analyzer's trace reader: sets facts->launches_seen,
// launches_no_layout and layouts_known from the first trace whose footer
// counts launches; leaves them alone when none does (no trace, cut short,
// unreadable).
void ReadChildLayouts(const std::string& dir, SubscriberFacts* facts);

// The hidden verb: initialise CUDA, make a context, allocate and free a
// little memory, exit 0 (or 1 with one line on stderr).
int CudaChildMain();

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_DOCTOR_SYSTEM_PROBE_H_
