#include "analyzer/report/dump_commands.h"

#include "common/text/utf8.h"

#include <filesystem>
#include <vector>

#include "common/format/dump_record.h"
#include "common/settings/settings.h"
#include "common/text/terminal_safe.h"

namespace numtrace::analyzer {
namespace {

std::string TraceDir(const Trace& t) {
  std::string dir = std::filesystem::path(t.path).parent_path().string();
  // A trace read through a pipe (`<(zcat a.gz)`: /dev/fd/63) has no directory
  // of its own to put a sibling beside.
  if (dir.empty() || dir == "." || dir.starts_with("/dev/") || dir == "/dev" ||
      dir.starts_with("/proc/")) {
    dir = "numtrace";
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // `-dash` would be read as an option by `numtrace run -o` and `numtrace diff`.
  if (dir.front() == '-') dir = "./" + dir;
  return dir;
}

std::string DumpDir(const Trace& t, uint64_t seq) { return TraceDir(t) + "-dump-seq" + std::to_string(seq); }

// A setting as its `numtrace run` option: `--opt VALUE`; for an option
// whose value may be left out (--ops, --watch) the option alone when the
// value is the one it implies, else `--opt=VALUE` (a separate word would be
// read as the job's command).
std::string OptionWords(const settings::Setting& s, const std::string& value) {
  const std::string option(s.option.substr(s.option.rfind(',') + 1));
  if (s.implicit_value.empty()) return option + " " + ShellQuote(value);
  if (value == s.implicit_value) return option;
  return ShellQuote(option + "=" + value);
}

// `numtrace run -o OUT --steps STEPS [options] [--label L]`. The header's
// capture.settings (written by the shim from the settings table's
// `recapture` entries) are repeated as `numtrace run` options, or as
// NUMTRACE_* assignments before the command for a setting with no option.
// `steps` empty: the trace's own steps, from NUMTRACE_STEPS as set, else
// capture.steps (the default depends on the step mode): the command says what
// it repeats. `whole_step`: the settings that narrow a step (`narrows_step`)
// are left out, and named in `*left_out` ("--launch-count 2").
std::string RunPrefix(const Trace& t, const std::string& out, std::string steps, bool whole_step = false,
                      std::string* left_out = nullptr) {
  std::string env, options, own_steps;
  if (t.header.capture) {
    for (const auto& [variable, value] : t.header.capture->settings) {
      const settings::Setting* s = settings::FindSetting(variable);
      if (s == nullptr || !s->recapture) continue;
      if (whole_step && s->narrows_step) {
        if (left_out != nullptr) *left_out += (left_out->empty() ? "" : " ") + OptionWords(*s, value);
        continue;
      }
      if (variable == "NUMTRACE_STEPS") {
        own_steps = ShellQuote(value);
        continue;
      }
      if (s->option.empty()) env += variable + "=" + ShellQuote(value) + " ";
      else options += " " + OptionWords(*s, value);
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

// The command `numtrace run` started (environment job.command, already
// shell-quoted): a launcher's, with every rank, where the job had one. A
// value with a byte a terminal would act on was not written by numtrace run
// (its quoting escapes them): not used.
const std::string* JobCommandOf(const Trace& t) {
  for (const auto& [key, value] : t.header.environment) {
    if (key != "job.command" || value.empty()) continue;
    for (size_t i = 0; i < value.size();) {
      const size_t len = TerminalInertLength(value, i);
      if (len == 0) return nullptr;
      i += len;
    }
    return &value;
  }
  return nullptr;
}

// ` -- COMMAND`: the job's command as numtrace run started it, else the
// process's argv as the header recorded it.
std::string CommandTail(const Trace& t) {
  std::string cmd = " --";
  if (const std::string* job = JobCommandOf(t)) {
    cmd += " " + *job;
  } else if (t.header.run && !t.header.run->argv.empty()) {
    // The bytes the process had (argv's escape, common/text/utf8.h), quoted so a paste passes them.
    for (const std::string& arg : t.header.run->argv) cmd += " " + ShellQuote(BytesFromUtf8(arg));
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
  bool safe = !s.empty() && s.front() != '=';  // zsh expands a leading `=`
  bool plain = true;  // printable as it is: no control byte, valid UTF-8, no C1 or bidi control
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '@' ||
                    c == '%' || c == '+' || c == '=';
    if (!ok) safe = false;
    const size_t len = TerminalInertLength(s, i);
    if (len == 0) {
      plain = false;
      break;
    }
    i += len;
  }
  if (safe) return std::string(s);
  if (plain) {
    std::string out = "'";
    for (char c : s) {
      if (c == '\'') out += "'\\''";
      else out.push_back(c);
    }
    return out + "'";
  }
  // Bytes a terminal would act on or show as something else: `$'...'` with
  // \xNN for them (bash, zsh, ksh; sh of POSIX.1-2024), so what is pasted
  // is the exact bytes, and what is printed stays inert.
  std::string out = "$'";
  for (size_t i = 0; i < s.size();) {
    const size_t len = TerminalInertLength(s, i);
    if (len == 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto c = static_cast<unsigned char>(s[i]);
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
      ++i;
      continue;
    }
    if (s[i] == '\'' || s[i] == '\\') out.push_back('\\');
    out.append(s.substr(i, len));
    i += len;
  }
  return out + "'";
}

StepCapture BuildStepCapture(const Trace& a, const Trace& b, int64_t step) {
  StepCapture c;
  c.dir_a = TraceDir(a) + "-step" + std::to_string(step);
  c.dir_b = TraceDir(b) + "-step" + std::to_string(step);
  if (c.dir_a == c.dir_b) {  // both traces in one directory (two ranks, two files in the cwd)
    c.dir_a += "-a";
    c.dir_b += "-b";
  }
  c.command_a = RunPrefix(a, c.dir_a, std::to_string(step), /*whole_step=*/true, &c.left_out_a) + CommandTail(a);
  c.command_b = RunPrefix(b, c.dir_b, std::to_string(step), /*whole_step=*/true, &c.left_out_b) + CommandTail(b);
  for (const Trace* t : {&a, &b}) {
    const bool launched_worker = t->header.run && (t->header.run->world_size > 1 || t->header.run->rank != 0);
    if (launched_worker && JobCommandOf(*t) == nullptr) c.worker = true;
  }
  c.diff = "numtrace diff " + ShellQuote(c.dir_a) + " " + ShellQuote(c.dir_b);
  // Re-running a whole job writes every rank into each directory, which a
  // diff of the two directories pairs rank by rank: two ranks of one run
  // compared with each other are compared as those two files again.
  if ((JobCommandOf(a) != nullptr || JobCommandOf(b) != nullptr) && a.rank != b.rank) {
    c.diff = "numtrace diff " + ShellQuote(c.dir_a + "/" + TraceFileName(a.rank)) + " " +
             ShellQuote(c.dir_b + "/" + TraceFileName(b.rank));
  }
  return c;
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
