#include "analyzer/report/dump_commands.h"

#include <filesystem>
#include <vector>

#include "common/format/dump_record.h"
#include "shim/engine/settings.h"

namespace numtrace::analyzer {
namespace {

std::string TraceDir(const Trace& t) {
  std::string dir = std::filesystem::path(t.path).parent_path().string();
  if (dir.empty() || dir == ".") dir = "numtrace";
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string DumpDir(const Trace& t, uint64_t seq) { return TraceDir(t) + "-dump-seq" + std::to_string(seq); }

// `numtrace run -o OUT --steps STEPS [options] [--label L]`. The header's
// capture.settings (written by the shim from the settings table's
// `recapture` entries) are repeated as `numtrace run` options, or as
// NUMTRACE_* assignments before the command for a setting with no option.
// `steps` empty: the trace's own steps, from NUMTRACE_STEPS as set, else
// capture.steps (the default depends on the step mode): the command says what
// it repeats.
std::string RunPrefix(const Trace& t, const std::string& out, std::string steps) {
  std::string env, options, own_steps;
  if (t.header.capture) {
    for (const auto& [variable, value] : t.header.capture->settings) {
      const shim::Setting* s = shim::FindSetting(variable);
      if (s == nullptr || !s->recapture) continue;
      if (variable == "NUMTRACE_STEPS") {
        own_steps = ShellQuote(value);
        continue;
      }
      std::string_view option = s->option.substr(s->option.rfind(',') + 1);
      if (s->option.empty()) env += variable + "=" + ShellQuote(value) + " ";
      else options += " " + std::string(option) + " " + ShellQuote(value);
    }
    if (own_steps.empty()) {
      for (int64_t s : t.header.capture->steps) own_steps += (own_steps.empty() ? "" : ",") + std::to_string(s);
    }
  }
  if (steps.empty()) steps = own_steps.empty() ? std::string("all") : own_steps;
  std::string cmd = env + "numtrace run -o " + ShellQuote(out) + " --steps " + steps + options;
  if (t.header.run && !t.header.run->label.empty()) cmd += " --label " + ShellQuote(t.header.run->label);
  return cmd;
}

// ` -- ARGV...` as the header recorded it.
std::string CommandTail(const Trace& t) {
  std::string cmd = " --";
  if (t.header.run && !t.header.run->argv.empty()) {
    for (const std::string& arg : t.header.run->argv) cmd += " " + ShellQuote(arg);
  } else {
    cmd += " YOUR_COMMAND";  // the trace did not record one
  }
  return cmd;
}

// The trace's run again with a tensor dump of launch `k`.
std::string Capture(const Trace& t, const Kernel& k, const std::string& out) {
  std::string cmd = RunPrefix(t, out, "");
  cmd += " --dump seq:" + std::to_string(k.seq);
  std::string expect(t.Name(k));
  expect += "@";
  const auto buffers = t.BuffersOf(k);
  for (size_t i = 0; i < buffers.size(); ++i) expect += (i ? "," : "") + std::to_string(buffers[i].bytes);
  return cmd + " --dump-expect " + ShellQuote(expect) + CommandTail(t);
}

}  // namespace

std::string ShellQuote(std::string_view s) {
  bool safe = !s.empty();
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '@' ||
                    c == '%' || c == '+' || c == '=';
    if (!ok) safe = false;
  }
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out.push_back(c);
  }
  return out + "'";
}

std::string StepCaptureDir(const Trace& t, int64_t step) { return TraceDir(t) + "-step" + std::to_string(step); }

std::string StepCaptureCommand(const Trace& t, int64_t step) {
  return RunPrefix(t, StepCaptureDir(t, step), std::to_string(step)) + CommandTail(t);
}

DumpCommands BuildDumpCommands(const Trace& a, const Kernel& ka, const Trace& b, const Kernel& kb) {
  DumpCommands c;
  const std::string out_a = DumpDir(a, ka.seq), out_b = DumpDir(b, kb.seq);
  c.capture_a = Capture(a, ka, out_a);
  c.capture_b = Capture(b, kb, out_b);
  c.tensors = "numtrace diff --tensors " + ShellQuote(out_a + "/" + DumpSidecarName(a.rank, ka.seq)) +
              " " + ShellQuote(out_b + "/" + DumpSidecarName(b.rank, kb.seq));
  return c;
}

}  // namespace numtrace::analyzer
