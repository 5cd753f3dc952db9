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
    CLI::Option* opt = app->add_option_function<std::string>(
        std::string(s.option),
        [o, variable, shown](const std::string& value) {
          o->settings[variable] = value;
          o->typed_as[variable] = shown;
        },
        help);
    opt->type_name(std::string(s.value_name));
    if (!s.implicit_value.empty()) {
      opt->expected(0, 1)->default_str(std::string(s.implicit_value));
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
