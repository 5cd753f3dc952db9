#include "launcher/command_context.h"

#include "CLI/CLI.hpp"
#include "common/text/terminal_safe.h"

namespace numtrace::launcher {

int FailLine(const CommandContext& ctx, std::string_view verb, std::string_view message) {
  WarnLine(ctx, verb, message);
  return kExitError;
}

void WarnLine(const CommandContext& ctx, std::string_view verb, std::string_view message) {
  // numtrace-diff's line (common/text/terminal_safe.h): a path or kernel name
  // holding a newline or ESC stays on this one line, inert.
  ctx.err << ErrorLine("numtrace " + std::string(verb), message);
  ctx.err.flush();
}

// Debian's Abseil has its own string_view type, hence the copy.
int FailLine(const CommandContext& ctx, std::string_view verb, const absl::Status& status) {
  return FailLine(ctx, verb, std::string(status.message().data(), status.message().size()));
}

bool ParseArgs(CLI::App& app, const std::vector<std::string>& args, const CommandContext& ctx,
               int* exit_code) {
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    ctx.out << app.help();
    *exit_code = kExitOk;
    return false;
  } catch (const CLI::CallForAllHelp&) {
    ctx.out << app.help();
    *exit_code = kExitOk;
    return false;
  } catch (const CLI::ParseError& e) {
    *exit_code = FailLine(ctx, app.get_name().substr(app.get_name().find(' ') + 1),
                          std::string(e.what()) + " (see --help)");
    return false;
  }
  return true;
}

}  // namespace numtrace::launcher
