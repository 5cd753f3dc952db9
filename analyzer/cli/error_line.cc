#include "analyzer/cli/error_line.h"

#include <string>

#include "common/text/terminal_safe.h"

namespace numtrace::analyzer {

namespace {
std::string& Program() {
  static std::string* name = new std::string("numtrace-diff");  // never destroyed: read at exit too
  return *name;
}
}  // namespace

void SetProgramName(std::string_view name) { Program().assign(name.data(), name.size()); }
std::string_view ProgramName() { return Program(); }

int FailLine(std::ostream& err, std::string_view message) {
  err << ErrorLine(ProgramName(), message);
  return kExitError;
}

// Debian's Abseil has its own string_view type, hence the copy.
int FailLine(std::ostream& err, const absl::Status& status) {
  return FailLine(err, std::string(status.message().data(), status.message().size()));
}

}  // namespace numtrace::analyzer
