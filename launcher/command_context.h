// File: launcher/command_context.h
//
// What every verb of the numtrace command gets: its streams, the process
// environment and where its parts are. main.cc fills it from the real
// process; tests fill it by hand and drive a verb in process.
//
// Exit codes: common/format/exit_codes.h, the same for every verb and for
// numtrace-diff (0 success or the runs agree, 1 the runs differ or a check
// failed, 2 bad usage or an input/output problem, with one line on stderr
// saying what and where). `run` passes the job's own exit status through.
#ifndef NUMTRACE_LAUNCHER_COMMAND_CONTEXT_H_
#define NUMTRACE_LAUNCHER_COMMAND_CONTEXT_H_

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/format/exit_codes.h"
#include "launcher/environment.h"
#include "launcher/install_layout.h"

namespace CLI {
class App;
}

namespace numtrace::launcher {

struct CommandContext {
  std::ostream& out;
  std::ostream& err;
  Environment env;
  InstallLayout layout;
  bool stdout_is_tty = false;
};

// Prints "numtrace VERB: message" as one line on err, written as numtrace-diff
// writes its lines (common/text/terminal_safe.h's ErrorLine: ESC -> "^[",
// newlines and other controls -> "\xNN"); returns kExitError.
int FailLine(const CommandContext& ctx, std::string_view verb, std::string_view message);
int FailLine(const CommandContext& ctx, std::string_view verb, const absl::Status& status);
// The same line for a warning that does not stop the verb.
void WarnLine(const CommandContext& ctx, std::string_view verb, std::string_view message);

// Parses `args` (args[0] is the verb's name) with `app`. Returns true when
// the verb should go on; otherwise *exit_code is set (0 after --help, 2 after
// a parse error, reported in one line).
bool ParseArgs(CLI::App& app, const std::vector<std::string>& args, const CommandContext& ctx,
               int* exit_code);

}  // namespace numtrace::launcher

#endif  // NUMTRACE_LAUNCHER_COMMAND_CONTEXT_H_
