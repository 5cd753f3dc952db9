// File: common/format/exit_codes.h
//
// The exit statuses of both front ends, numtrace-diff and the numtrace
// command (docs/format.md, section 3): one set, because `numtrace diff` and
// `numtrace twice` run numtrace-diff's code in process and a script reads
// the status the same way whichever it called.
//
//   0  kExitOk        the runs agree (identical or within tolerance), or the
//                     command did what it was asked (show, doctor's checks pass)
//   1  kExitDiverged  the runs diverged (or, under --strict, were compared
//                     incompletely), or a check failed (doctor)
//   2  kExitError     bad usage or an input/output problem, with one line on
//                     stderr saying what and where (terminal_safe.h's ErrorLine)
//
// `numtrace run` passes the job's own exit status through instead.
#ifndef NUMTRACE_COMMON_FORMAT_EXIT_CODES_H_
#define NUMTRACE_COMMON_FORMAT_EXIT_CODES_H_

namespace numtrace {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDiverged = 1;
inline constexpr int kExitError = 2;

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_EXIT_CODES_H_
