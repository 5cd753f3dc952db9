#include "common/settings/settings.h"

#include <optional>
#include <string>
#include <utility>

#include "common/format/enum_list.h"
#include "common/format/records.h"
#include "common/settings/config.h"
#include "common/settings/dump_selector.h"
#include "common/settings/modes.h"
#include "common/settings/name_filter.h"
#include "common/settings/name_pattern.h"
#include "common/settings/step_set.h"
#include "common/settings/value_parsers.h"
#include "common/text/trim.h"

namespace numtrace::settings {
namespace {

using std::string_view;

constexpr string_view kStepModes = "mark, api, profiler, nvtx:REGEX, kernel:REGEX, launches:N (N >= 1)";
constexpr string_view kFilters = "SUBSTRING or regex:EXPR, several separated by ';'";
constexpr string_view kBytes = "a byte count like 4096, 512k, 64MiB, 1G";

bool NotBlank(string_view v) { return !Trim(v).empty(); }

bool ParseSwitch(string_view v, bool* out) {
  auto b = ParseBool(v);
  if (b) *out = *b;
  return b.has_value();
}

bool ParseStepMode(string_view v, Config* c) {
  string_view m = Trim(v);
  // The word (the list's), then for the last three ":ARGUMENT".
  const size_t colon = m.find(':');
  const std::optional<StepMode> mode = EnumFromName<StepMode>(kStepModeNames, m.substr(0, colon));
  if (!mode) return false;
  const bool takes_argument = *mode == StepMode::kNvtx || *mode == StepMode::kKernel || *mode == StepMode::kLaunches;
  if (takes_argument != (colon != string_view::npos)) return false;
  c->step_mode = *mode;
  if (*mode == StepMode::kNvtx || *mode == StepMode::kKernel) {
    string_view re = m.substr(colon + 1);
    auto compiled = NamePattern::Compile(re);
    if (re.empty() || !compiled) return false;
    c->step_regex_text = std::string(re);
    c->step_regex = std::move(*compiled);
  } else if (*mode == StepMode::kLaunches) {
    auto n = ParseCount(m.substr(colon + 1));
    if (!n || *n == 0) return false;
    c->launches_per_step = *n;
  }
  // Range modes capture every range by default: the ranges are the selection.
  const bool range_mode = c->step_mode == StepMode::kApi || c->step_mode == StepMode::kProfiler ||
                          c->step_mode == StepMode::kNvtx;
  c->steps = range_mode ? StepSet::All() : StepSet::Only(2);
  return true;
}

bool ParseCountAtLeast(string_view v, uint64_t min, uint64_t* out) {
  auto n = ParseCount(v);
  if (!n || *n < min) return false;
  *out = *n;
  return true;
}

bool ParseBytesAtLeast(string_view v, uint64_t min, uint64_t* out) {
  auto n = ParseByteSize(v);
  if (!n || *n < min) return false;
  *out = *n;
  return true;
}

// One entry per setting; the order is the parse order (ENABLE first, then
// what later entries depend on before them). Keep `help` to one short line:
// it is the --help text and the docs' meaning column.
constexpr Setting kSettings[] = {
    {.variable = "NUMTRACE_ENABLE",
     .kind = SettingKind::kSwitch,
     .default_text = "1",
     .accepted = kBoolWords,
     .help = "off: numtrace stays off, silently, whatever else is set (keep the preload, switch it off per run)",
     .parse = [](string_view v, Config* c) { return ParseSwitch(v, &c->enabled); }},
    {.variable = "NUMTRACE_STRICT",
     .kind = SettingKind::kSwitch,
     .default_text = "0",
     .accepted = kBoolWords,
     .help = "on: a bad setting exits the process with status 2 instead of leaving numtrace off",
     .parse = [](string_view v, Config* c) { return ParseSwitch(v, &c->strict); }},
    {.variable = "NUMTRACE_ACTIVITY",
     .kind = SettingKind::kSwitch,
     .default_text = "1",
     .accepted = kBoolWords,
     .help = "off: CUPTI kernel activity records are never enabled (kernels that ran unmeasured are not counted); the first thing to try when a job hangs under numtrace",
     .parse = [](string_view v, Config* c) { return ParseSwitch(v, &c->activity); }},
    {.variable = "NUMTRACE_OUTPUT_DIR",
     .option = "-o,--output",
     .value_name = "DIR",
     .kind = SettingKind::kPath,
     .run_required = true,
     .default_text = "./numtrace",
     .accepted = "a directory path",
     .help = "directory of the traces, one file per capturing process; created if missing",
     .parse = [](string_view v, Config* c) {
       if (!NotBlank(v)) return false;
       c->output_dir = std::string(v);
       return true;
     }},
    {.variable = "NUMTRACE_LABEL",
     .option = "--label",
     .value_name = "TEXT",
     .accepted = "any text",
     .help = "free text written in the trace header's run.label (eager, compiled, A)",
     .parse = [](string_view v, Config* c) {
       c->label = std::string(v);
       return true;
     }},
    {.variable = "NUMTRACE_JOB_GIT",
     .accepted = "any text",
     .help = "the job's git commit (+dirty), set by numtrace run; written as the environment's job.git",
     .parse = [](string_view v, Config* c) {
       c->job_git = std::string(v);
       return true;
     }},
    {.variable = "NUMTRACE_JOB_COMMAND",
     .accepted = "any text",
     .help = "the command numtrace run started, shell-quoted (a launcher's, not one worker's); written as the "
             "environment's job.command, which the diff's printed re-capture commands run again",
     .parse = [](string_view v, Config* c) {
       c->job_command = std::string(v);
       return true;
     }},
    {.variable = "NUMTRACE_RUN_STATE",
     .accepted = "a directory",
     .help = "set by numtrace run: a private directory where each process of the job that starts CUDA leaves "
             "an empty file named by its pid, so the run can say that a job never started CUDA",
     .parse = [](string_view v, Config* c) {
       c->run_state_dir = std::string(v);
       return true;
     }},
    {.variable = "NUMTRACE_STEP_MODE",
     .option = "--step-mark",
     .value_name = "MODE",
     .recapture = true,
     .default_text = "mark",
     .accepted = kStepModes,
     .help = "what delimits a step (see \"what delimits a step\")",
     .parse = ParseStepMode},
    {.variable = "NUMTRACE_STEPS",
     .option = "--steps",
     .value_name = "LIST",
     .recapture = true,
     .default_text = "2 (all with api, profiler, nvtx:; none with NUMTRACE_WATCH)",
     .accepted = "all, none, N, N,M, N-M or a mix like 1,3-4 (N >= 0)",
     .help = "which steps are captured",
     .parse = [](string_view v, Config* c) {
       auto s = StepSet::Parse(v);
       if (s) c->steps = std::move(*s);
       return s.has_value();
     }},
    {.variable = "NUMTRACE_LAUNCH_SKIP",
     .option = "--launch-skip",
     .value_name = "N",
     .recapture = true,
     .narrows_step = true,
     .default_text = "0",
     .accepted = "a count N >= 0",
     .help = "skip the first N launches that pass the step and kernel filters",
     .parse = [](string_view v, Config* c) { return ParseCountAtLeast(v, 0, &c->launch_skip); }},
    {.variable = "NUMTRACE_LAUNCH_COUNT",
     .option = "--launch-count",
     .value_name = "N",
     .recapture = true,
     .narrows_step = true,
     .default_text = "no limit",
     .accepted = "a count N >= 1",
     .help = "then capture at most N launches",
     .parse = [](string_view v, Config* c) {
       uint64_t n = 0;
       if (!ParseCountAtLeast(v, 1, &n)) return false;
       c->launch_count = n;
       return true;
     }},
    {.variable = "NUMTRACE_KERNEL",
     .option = "--kernel-name",
     .value_name = "FILTERS",
     .recapture = true,
     .narrows_step = true,
     .default_text = "every kernel",
     .accepted = kFilters,
     .help = "capture only kernels whose mangled or demangled name matches one filter",
     .parse = [](string_view v, Config* c) {
       auto f = ParseNameFilters(v);
       if (f) c->include = std::move(*f);
       return f.has_value();
     }},
    {.variable = "NUMTRACE_KERNEL_EXCLUDE",
     .option = "--kernel-name-exclude",
     .value_name = "FILTERS",
     .recapture = true,
     .narrows_step = true,
     .default_text = "none",
     .accepted = kFilters,
     .help = "leave out kernels whose name matches one filter",
     .parse = [](string_view v, Config* c) {
       auto f = ParseNameFilters(v);
       if (f) c->exclude = std::move(*f);
       return f.has_value();
     }},
    {.variable = "NUMTRACE_MIN_BYTES",
     .option = "--min-bytes",
     .value_name = "BYTES",
     .recapture = true,
     .default_text = "0",
     .accepted = kBytes,
     .help = "buffers smaller than this are neither measured nor listed",
     .parse = [](string_view v, Config* c) { return ParseBytesAtLeast(v, 0, &c->min_bytes); }},
    {.variable = "NUMTRACE_WATCH",
     .option = "--watch",
     .value_name = "MODE",
     .implicit_value = "full",
     .default_text = "off",
     .accepted = "full, sampled or off",
     .help = "a digest of every launch (at operator level: every operator call) on every step (full: every byte; sampled: about 1/32 of each buffer)",
     .parse = [](string_view v, Config* c) {
       auto m = EnumFromName<WatchMode>(kWatchModeNames, Trim(v));
       if (m) c->watch = *m;
       return m.has_value();
     }},
    {.variable = "NUMTRACE_LEVEL",
     .option = "--ops",
     .value_name = "LEVEL",
     .implicit_value = "ops",
     .recapture = true,
     .default_text = "kernels",
     .accepted = "kernels or ops (with NUMTRACE_WATCH/--watch, ops digests every operator call)",
     .help = "ops: one record per PyTorch operator call, measured by the hooks' dispatch mode (no CUDA or CUPTI needed); kernels: one per kernel launch (CUPTI)",
     .parse = [](string_view v, Config* c) {
       auto m = EnumFromName<CaptureLevel>(kCaptureLevelNames, Trim(v));
       if (!m) return false;
       c->level = *m;
       return true;
     }},
    {.variable = "NUMTRACE_ALLOCATOR",
     .option = "--allocator",
     .value_name = "MODE",
     .recapture = true,
     .default_text = "caching",
     .accepted = "caching or async",
     .help = "caching: PyTorch's allocator is left as it is and the hooks report each tensor from its trace; async: numtrace run sets PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (one allocation per tensor; not with CUDA graph trees, MemPool or symmetric memory)",
     .parse = [](string_view v, Config* c) {
       auto m = ParseAllocatorMode(v);
       if (m) c->allocator = *m;
       return m.has_value();
     }},
    {.variable = "NUMTRACE_OUTPUTS",
     .option = "--outputs",
     .value_name = "WHICH",
     .recapture = true,
     .default_text = "changed",
     .accepted = "changed or all",
     .help = "changed: measure before and after, roles out/in; all: after only, roles unknown",
     .parse = [](string_view v, Config* c) {
       auto m = EnumFromName<OutputsMode>(kOutputsModeNames, Trim(v));
       if (m) c->outputs = *m;
       return m.has_value();
     }},
    {.variable = "NUMTRACE_DEVICE_MEMORY",
     .option = "--device-memory",
     .value_name = "BYTES",
     .default_text = "64MiB",
     .accepted = "a size of at least 1MiB, like 64MiB or 1G",
     .help = "first chunk of each context's device ring; it grows (on numtrace's thread) up to NUMTRACE_RING_MAX, a 32nd of the GPU's memory and a tenth of it left free; beyond that a launch is dropped whole and counted",
     .parse = [](string_view v, Config* c) { return ParseBytesAtLeast(v, 1u << 20, &c->device_memory); }},
    {.variable = "NUMTRACE_RING_MAX",
     .option = "--ring-max",
     .value_name = "BYTES",
     .default_text = "2GiB",
     .accepted = "a size of at least 1MiB, like 512MiB or 2G",
     .help = "the most device memory each context's ring may grow to (chunks left empty for about 5 s are given back)",
     .parse = [](string_view v, Config* c) { return ParseBytesAtLeast(v, 1u << 20, &c->ring_max); }},
    {.variable = "NUMTRACE_DUMP",
     .option = "--dump",
     .value_name = "LAUNCHES",
     .default_text = "none",
     .accepted = "seq:N[,M...], NAME#K (K-th launch of kernel NAME, from 0) or regex:RE",
     .help = "tensor dumps of these captured launches (see \"tensor dumps\")",
     .parse = [](string_view v, Config* c) {
       std::string accepted;
       auto sel = ParseDumpSelection(Trim(v), &accepted);
       if (sel) c->dump = std::move(*sel);
       return sel.has_value();
     }},
    {.variable = "NUMTRACE_DUMP_EXPECT",
     .option = "--dump-expect",
     .value_name = "NAME@BYTES,...",
     .default_text = "none",
     .accepted = "NAME@BYTES,BYTES,... with NUMTRACE_DUMP naming one launch (seq:N or NAME#K)",
     .help = "the kernel name and buffer sizes the earlier trace recorded at the dumped launch; another launch gets a note",
     .parse = [](string_view v, Config* c) {
       auto e = ParseDumpExpectation(Trim(v));
       const bool one_launch =
           c->dump && ((c->dump->form == DumpSelection::Form::kSeq && c->dump->seqs.size() == 1) ||
                       c->dump->form == DumpSelection::Form::kNameCount);
       if (!e || !one_launch) return false;
       c->dump_expect = std::move(*e);
       return true;
     }},
    {.variable = "NUMTRACE_DUMP_DIR",
     .option = "--dump-dir",
     .value_name = "DIR",
     .kind = SettingKind::kPath,
     .default_text = "the trace's directory",
     .accepted = "a directory path",
     .help = "where the dump files go",
     .parse = [](string_view v, Config* c) {
       if (!NotBlank(v)) return false;
       c->dump_dir = std::string(v);
       return true;
     }},
    {.variable = "NUMTRACE_DUMP_MAX_BYTES",
     .option = "--dump-max-bytes",
     .value_name = "BYTES",
     .default_text = "4G",
     .accepted = "a size of at least 1 byte, like 512MiB or 4G",
     .help = "all dumps of a process together; a launch that would pass it is not dumped and a note says so",
     .parse = [](string_view v, Config* c) { return ParseBytesAtLeast(v, 1, &c->dump_max_bytes); }},
    {.variable = "NUMTRACE_HOOKS_LOG",
     .option = "--hooks-log",
     .value_name = "FILE",
     .kind = SettingKind::kPath,
     .default_text = "none",
     .accepted = "a file path",
     .help = "the PyTorch hooks append one line per provenance event they announce in captured steps "
             "(step=N, phase, scope, op): what the kernels will be stamped with, GPU or not",
     .parse = [](string_view v, Config* c) {
       if (!NotBlank(v)) return false;
       c->hooks_log = std::string(v);
       return true;
     }},
    {.variable = "NUMTRACE_QUEUE_RECORDS",
     .default_text = "65536",
     .accepted = "a count N >= 1",
     .help = "records the writer may hold; beyond it records are dropped and counted, so memory stays bounded",
     .parse = [](string_view v, Config* c) { return ParseCountAtLeast(v, 1, &c->queue_records); }},
    {.variable = "NUMTRACE_EXIT_WAIT",
     .default_text = "10",
     .accepted = "a count of seconds N >= 0",
     .help = "how long exit (and a context's destruction) waits for measurements still on the GPU; what is left is written as dropped and counted (exit_wait_expired)",
     .parse = [](string_view v, Config* c) { return ParseCountAtLeast(v, 0, &c->exit_wait_seconds); }},
    {.variable = "NUMTRACE_LOG_LEVEL",
     .option = "--log-level",
     .value_name = "LEVEL",
     .default_text = "warn",
     .accepted = "off, error, warn, info, debug",
     .help = "the shim's stderr lines; info adds a line at start and the trace path at exit",
     .parse = [](string_view v, Config* c) {
       string_view m = Trim(v);
       if (m != "off" && m != "error" && m != "warn" && m != "info" && m != "debug") return false;
       c->log_level = std::string(m);
       return true;
     }},
    {.variable = "NUMTRACE_CUPTI_LIB",
     .option = "--cupti-lib",
     .value_name = "PATH",
     .kind = SettingKind::kPath,
     .default_text = "search",
     .accepted = "a path to libcupti.so",
     .help = "the libcupti.so to load (PyTorch wheels ship their own; use that one)",
     .parse = [](string_view v, Config* c) {
       if (!NotBlank(v)) return false;
       c->cupti_lib = std::string(v);
       return true;
     }},
};

// A table cell: '|' would end the cell, a newline the row.
std::string Cell(string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

std::string Code(string_view text) { return "`" + std::string(text) + "`"; }

}  // namespace

std::span<const Setting> Settings() { return kSettings; }

const Setting* FindSetting(std::string_view variable) {
  for (const Setting& s : kSettings) {
    if (s.variable == variable) return &s;
  }
  return nullptr;
}

std::string RenderSettingsTable() {
  std::string t = "| variable | `numtrace run` option | default | accepted | meaning |\n";
  t += "|---|---|---|---|---|\n";
  for (const Setting& s : kSettings) {
    std::string option = "-";
    if (!s.option.empty()) {
      // "-o,--output" reads as "`-o DIR`, `--output DIR`".
      option.clear();
      string_view rest = s.option;
      while (!rest.empty()) {
        size_t comma = rest.find(',');
        string_view name = rest.substr(0, comma);
        if (!option.empty()) option += ", ";
        std::string shown(name);
        if (!s.implicit_value.empty()) shown += "[=" + std::string(s.value_name) + "]";
        else if (!s.value_name.empty()) shown += " " + std::string(s.value_name);
        option += Code(shown);
        rest = comma == string_view::npos ? string_view() : rest.substr(comma + 1);
      }
    }
    t += "| " + Code(s.variable) + " | " + Cell(option) + " | " +
         (s.default_text.empty() ? std::string("empty") : Cell(s.default_text)) + " | " +
         Cell(s.accepted) + " | " + Cell(s.help) + " |\n";
  }
  return t;
}

}  // namespace numtrace::settings
