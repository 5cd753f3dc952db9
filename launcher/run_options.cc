#include "launcher/run_options.h"

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "common/settings/config.h"

namespace numtrace::launcher {

const std::string& RunOptions::Get(const std::string& variable) const {
  static const std::string kEmpty;
  auto it = settings.find(variable);
  return it == settings.end() ? kEmpty : it->second;
}

void AddRunOptions(CLI::App* app, RunOptions* o) {
  for (const settings::Setting& s : settings::Settings()) {
    if (s.option.empty()) continue;
    const std::string variable(s.variable);
    std::string help(s.help);
    help += "; accepted: " + std::string(s.accepted) + " (" + variable + ")";
    // "-o,--output" is shown as "-o/--output" in messages about its value.
    std::string shown(s.option);
    for (char& c : shown) c = c == ',' ? '/' : c;
    // The value is kept even when empty: the shim's parser judges it.
    auto keep = [o, variable, shown](const std::string& value) {
      o->settings[variable] = value;
      o->typed_as[variable] = shown;
    };
    CLI::Option* opt;
    if (!s.implicit_value.empty()) {
      // A flag with a value (`--watch` alone is full, `--watch=sampled`
      // picks): unlike an option of 0 or 1 values it never takes the next
      // argument, so `--watch -- CMD` keeps `--` and the command.
      // NormalizeRunArgs spells a bare flag's implicit value out, so the
      // "true" CLI11 hands over can only come from `--watch=` (empty, which
      // the environment's NUMTRACE_WATCH= refuses too) or `--watch=true`:
      // kept as empty, for the shim's parser to refuse like every bad value.
      opt = app->add_flag(std::string(s.option))
                ->description(help)
                ->each([keep](const std::string& value) { keep(value == "true" ? std::string() : value); });
      opt->type_name("[=" + std::string(s.value_name) + "]");
    } else {
      opt = app->add_option_function<std::string>(std::string(s.option), keep, help);
      opt->type_name(std::string(s.value_name));
    }
    if (s.run_required) opt->required();
  }
  app->add_flag("--force", o->force, "use DIR even if it exists and is not empty");
  app->add_option("--dump-first-divergence", o->dump_first_divergence,
                  "SUMMARY.json of numtrace diff --json: dump its first divergence (with --side a|b)");
  app->add_option("--side", o->side, "a or b: which run's launch --dump-first-divergence dumps")
      ->check(CLI::IsMember({"a", "b"}));
  app->add_flag("--torch-hooks", o->torch_hooks,
                "put the PyTorch hooks on PYTHONPATH even if CMD does not look like Python");
  app->add_flag("--no-torch-hooks", o->no_torch_hooks, "never put the PyTorch hooks on PYTHONPATH");
  app->add_flag("--injection", o->injection,
                "load the library through CUDA_INJECTION64_PATH instead of LD_PRELOAD");
  // Parsing stops at the job's command: what follows it is the job's own
  // (`run -o D python t.py --steps 3` gives --steps 3 to t.py).
  app->prefix_command();
}

std::vector<std::string> NormalizeRunArgs(const std::vector<std::string>& args,
                                          std::span<const settings::Setting> table) {
  std::vector<std::string> out = args;
  for (size_t i = 1; i < out.size(); ++i) {
    const std::string& a = out[i];
    if (a == "--" || a.empty() || a[0] != '-') break;  // the command starts here
    if (a.find('=') != std::string::npos) continue;   // --name=value
    bool takes_value = a == "--dump-first-divergence" || a == "--side";
    for (const settings::Setting& s : table) {
      std::string_view names = s.option;
      while (!names.empty()) {
        const size_t comma = names.find(',');
        if (names.substr(0, comma) == a) {
          if (!s.implicit_value.empty()) {
            // `--watch sampled`, like every other option: the next word is the
            // value when it is one the setting accepts, else the command.
            settings::Config probe;
            if (i + 1 < out.size() && s.parse != nullptr && s.parse(out[i + 1], &probe)) {
              out[i] = a + "=" + out[i + 1];
              out.erase(out.begin() + static_cast<std::ptrdiff_t>(i) + 1);
            } else {
              out[i] = a + "=" + std::string(s.implicit_value);
            }
          } else {
            takes_value = true;
          }
        }
        names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
      }
    }
    if (takes_value) ++i;
  }
  return out;
}

absl::Status TakeCommand(const CLI::App& app, RunOptions* o) {
  std::vector<std::string> rest = app.remaining();
  const bool after_dashes = !rest.empty() && rest.front() == "--";
  if (after_dashes) rest.erase(rest.begin());
  const std::string verb = app.get_name().substr(app.get_name().find(' ') + 1);
  if (rest.empty()) {
    return absl::InvalidArgumentError("no command given: numtrace " + verb +
                                      " -o DIR [options] [--] CMD ARGS... (see --help)");
  }
  // Before `--`, a word starting with '-' is an option numtrace does not know.
  if (!after_dashes && rest.front().size() > 1 && rest.front()[0] == '-') {
    return absl::InvalidArgumentError("unknown option " + rest.front() +
                                      " (numtrace's options come before the command; see --help)");
  }
  o->command = std::move(rest);
  return absl::OkStatus();
}

}  // namespace numtrace::launcher
