#include "launcher/doctor/doctor_command.h"

#include <cstdio>

#include "CLI/CLI.hpp"
#include "common/text/terminal_safe.h"

namespace numtrace::launcher {

std::string FormatDoctorReport(const DoctorReport& report) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %-6s %s\n", "check", "status", "found / what to do");
  out += line;
  for (const CheckRow& r : report.rows) {
    std::snprintf(line, sizeof line, "%-22s %-6s ", r.name.c_str(), std::string(CheckStatusName(r.status)).c_str());
    // Rows quote paths and NUMTRACE_* values: escaped as every numtrace line.
    out += line + TerminalSafe(r.found) + "\n";
    if (!r.fix.empty() && r.status != CheckStatus::kOk) {
      out += std::string(30, ' ') + "-> " + TerminalSafe(r.fix) + "\n";
    }
  }
  out += report.verdict + "\n";
  return out;
}

int DoctorCommandMain(const std::vector<std::string>& args, const CommandContext& ctx,
                      SystemProbe& probe) {
  std::string dir;
  CLI::App app{"numtrace doctor: can numtrace capture on this machine? A table of checks, each "
               "with what to do when it fails"};
  app.name("numtrace doctor");
  app.add_option("-o,--output", dir, "the directory traces will go to (default: NUMTRACE_OUTPUT_DIR, else .)");
  app.footer(R"(Exit 0 only when capture can work here; 1 when it cannot.
NUMTRACE_PYTHON names the interpreter whose torch/triton are checked (default python3).

Examples:
  numtrace doctor
  numtrace doctor -o /scratch/runs
  NUMTRACE_PYTHON=.venv/bin/python numtrace doctor)");
  int code = 0;
  if (!ParseArgs(app, args, ctx, &code)) return code;
  DoctorInputs in;
  in.layout = ctx.layout;
  in.env = ctx.env;
  in.output_dir = !dir.empty() ? dir : ctx.env.Get("NUMTRACE_OUTPUT_DIR", ".");
  in.gencode = NUMTRACE_CUDA_GENCODE_STRING;
  DoctorReport report = RunDoctorChecks(probe, in);
  ctx.out << FormatDoctorReport(report);
  ctx.out.flush();
  return report.can_capture ? kExitOk : kExitDiverged;
}

}  // namespace numtrace::launcher
