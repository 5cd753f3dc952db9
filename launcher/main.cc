// File: launcher/main.cc
//
// numtrace: the installed command. Everything but the process plumbing
// lives in numtrace_main.cc and the verb files beside it.
//
// Example:
//   numtrace run -o runA --steps 2 -- python train.py
#include <unistd.h>

#include <iostream>

#include "launcher/child_process.h"
#include "launcher/doctor/system_probe.h"
#include "launcher/numtrace_main.h"

int main(int argc, char** argv) {
  using namespace numtrace::launcher;
  std::vector<std::string> args(argv + 1, argv + argc);
  // doctor's subscriber check starts this program under the library.
  if (args.size() == 1 && args[0] == "__cuda-child") return CudaChildMain();
  IgnoreSigpipe();
  Environment env = EnvironmentFromProcess();
  CommandContext ctx{std::cout, std::cerr, env, FindInstallLayout(env), isatty(STDOUT_FILENO) == 1};
  MachineProbe probe;
  return NumtraceMain(args, ctx, probe);
}
