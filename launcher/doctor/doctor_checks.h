// File: launcher/doctor/doctor_checks.h
//
// From facts to the doctor's table: one row per check, each with its
// status, what was found, and what to do when it fails. Capture can work
// only when no `required` row failed.
//
// Example:
//   DoctorReport r = RunDoctorChecks(probe, inputs);
//   r.can_capture   // false on a machine without a CUDA driver
//   r.verdict       // "numtrace cannot capture on this machine: no CUDA driver ..."
#ifndef NUMTRACE_LAUNCHER_DOCTOR_DOCTOR_CHECKS_H_
#define NUMTRACE_LAUNCHER_DOCTOR_DOCTOR_CHECKS_H_

#include <string>
#include <string_view>
#include <vector>

#include "launcher/doctor/system_facts.h"

namespace numtrace::launcher {

enum class CheckStatus { kOk, kWarn, kFail, kSkip };
std::string_view CheckStatusName(CheckStatus s);  // "ok", "warn", "FAIL", "skip"

struct CheckRow {
  std::string name;
  CheckStatus status = CheckStatus::kOk;
  std::string found;   // what was found (or why skipped)
  std::string fix;     // what to do; empty when nothing to do
  bool required = true;  // a failure here means capture cannot work
};

struct DoctorInputs {
  InstallLayout layout;
  Environment env;
  std::string output_dir;   // checked for writing
  std::string gencode;      // the fatbin's nvcc -gencode flags (the build's)
};

struct DoctorReport {
  std::vector<CheckRow> rows;
  bool can_capture = false;
  std::string verdict;      // one line
};

DoctorReport RunDoctorChecks(SystemProbe& probe, const DoctorInputs& inputs);

// Whether the fatbin built from `gencode` runs on compute capability
// major.minor: SASS for the same major and a minor not above it, or PTX for
// an architecture not above it (JIT). `what` lists what the fatbin holds.
bool ReductionKernelsCover(const std::string& gencode, int major, int minor, std::string* what);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_DOCTOR_DOCTOR_CHECKS_H_
