#include "analyzer/cli/error_line.h"

#include <string>

#include "analyzer/report/terminal_text.h"

namespace numtrace::analyzer {

int FailLine(std::ostream& err, std::string_view message) {
  err << "numtrace-diff: " << TerminalSafe(message) << "\n";
  return kExitError;
}

// Debian's Abseil has its own string_view type, hence the copy.
int FailLine(std::ostream& err, const absl::Status& status) {
  return FailLine(err, std::string(status.message().data(), status.message().size()));
}

}  // namespace numtrace::analyzer
