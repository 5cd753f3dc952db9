#include "launcher/run_options.h"

#include "CLI/CLI.hpp"
#include "shim/engine/settings.h"

namespace numtrace::launcher {

const std::string& RunOptions::Get(const std::string& variable) const {
  static const std::string kEmpty;
  auto it = settings.find(variable);
  return it == settings.end() ? kEmpty : it->second;
}

void AddRunOptions(CLI::App* app, RunOptions* o) {
  for (const shim::Setting& s : shim::Settings()) {
    if (s.option.empty()) continue;
    const std::string variable(s.variable);
    std::string help(s.help);
    help += " (" + variable + ")";
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
      // CLI11 hands a bare flag over as "true": that is the implicit value.
      const std::string implicit(s.implicit_value);
      opt = app->add_flag(std::string(s.option))
                ->description(help)
                ->each([keep, implicit](const std::string& value) { keep(value == "true" ? implicit : value); });
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
  app->add_option("command", o->command, "the job: -- CMD ARGS...")->required();
}

}  // namespace numtrace::launcher
