// File: launcher/doctor/doctor_command.h
//
// `numtrace doctor [-o DIR]`: before a long job, whether capture can work
// here - a table of checks (library, driver, GPU and compute capability,
// reduction kernel coverage, CUPTI, a free CUPTI subscriber slot, output
// directory, allocator setting, torch/triton and the hooks), each with what
// to do when it fails, and one verdict line. Exit 0 only when capture can
// work, 1 when it cannot, 2 on bad usage.
//
// Example:
//   numtrace doctor -o /scratch/runs
#ifndef NUMTRACE_LAUNCHER_DOCTOR_DOCTOR_COMMAND_H_
#define NUMTRACE_LAUNCHER_DOCTOR_DOCTOR_COMMAND_H_

#include <string>
#include <vector>

#include "launcher/command_context.h"
#include "launcher/doctor/doctor_checks.h"

namespace numtrace::launcher {

// The table as printed (exposed for tests).
std::string FormatDoctorReport(const DoctorReport& report);

// args[0] == "doctor". `probe` is the machine (MachineProbe) or a fake.
int DoctorCommandMain(const std::vector<std::string>& args, const CommandContext& ctx,
                      SystemProbe& probe);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_DOCTOR_DOCTOR_COMMAND_H_
