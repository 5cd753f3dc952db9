#include "analyzer/report/dump_commands.h"

#include <filesystem>
#include <vector>

#include "common/format/dump_record.h"

namespace numtrace::analyzer {
namespace {

// The settings in capture.selector (written by the shim's
// Config::SelectorText: "mode=M steps=S [launch_skip=N] [launch_count=N]
// [kernel=F]... [exclude=F]... [min_bytes=N]") that change which launches a
// run captures, hence its seq numbers, as `numtrace run` options (`flag`
// empty: a NUMTRACE_* assignment before the command, no option exists).
struct SelectorSetting {
  std::string flag, env, value;
};
std::vector<SelectorSetting> SelectorSettings(std::string_view selector) {
  struct Key {
    std::string_view key, flag, env;
  };
  static constexpr Key kKeys[] = {
      {"mode=", "--step-mark", ""},          {"launch_skip=", "--launch-skip", ""},
      {"launch_count=", "--launch-count", ""}, {"kernel=", "--kernel-name", ""},
      {"exclude=", "--kernel-name-exclude", ""}, {"min_bytes=", "", "NUMTRACE_MIN_BYTES"},
      {"steps=", "", ""}};
  // Split at " key=" boundaries: a value (a regex) may hold spaces.
  std::vector<SelectorSetting> found;
  size_t pos = 0;
  while (pos < selector.size()) {
    const Key* key = nullptr;
    for (const Key& k : kKeys) {
      if (selector.substr(pos).starts_with(k.key)) key = &k;
    }
    size_t next = selector.size();
    for (const Key& k : kKeys) {
      size_t at = selector.find(" " + std::string(k.key), pos + 1);
      if (at != std::string_view::npos && at < next) next = at;
    }
    if (key != nullptr && (!key->flag.empty() || !key->env.empty())) {
      std::string value(selector.substr(pos + key->key.size(), next - pos - key->key.size()));
      bool merged = false;
      for (SelectorSetting& f : found) {
        if (f.flag == key->flag && f.env == key->env) f.value += ";" + value, merged = true;  // ';'-separated list
      }
      const bool default_mode = key->key == "mode=" && value == "mark";
      if (!merged && !default_mode) found.push_back({std::string(key->flag), std::string(key->env), value});
    }
    pos = next == selector.size() ? next : next + 1;
  }
  return found;
}

std::string TraceDir(const Trace& t) {
  std::string dir = std::filesystem::path(t.path).parent_path().string();
  if (dir.empty() || dir == ".") dir = "numtrace";
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string DumpDir(const Trace& t, uint64_t seq) { return TraceDir(t) + "-dump-seq" + std::to_string(seq); }

// `numtrace run -o OUT --steps STEPS [options] [--label L]`, with the
// selector's settings that change which launches are captured.
std::string RunPrefix(const Trace& t, const std::string& out, const std::string& steps) {
  std::string env, options;
  if (t.header.capture) {
    for (const SelectorSetting& f : SelectorSettings(t.header.capture->selector)) {
      if (f.flag.empty()) env += f.env + "=" + ShellQuote(f.value) + " ";
      else options += " " + f.flag + " " + ShellQuote(f.value);
    }
    if (t.header.capture->outputs == "all") options += " --outputs all";
  }
  std::string cmd = env + "numtrace run -o " + ShellQuote(out) + " --steps " + steps + options;
  if (t.header.run && !t.header.run->label.empty()) cmd += " --label " + ShellQuote(t.header.run->label);
  return cmd;
}

std::string CommandTail(const Trace& t) {
  std::string cmd = " --";
  if (t.header.run && !t.header.run->argv.empty()) {
    for (const std::string& arg : t.header.run->argv) cmd += " " + ShellQuote(arg);
  } else {
    cmd += " YOUR_COMMAND";  // the trace did not record one
  }
  return cmd;
}

std::string Capture(const Trace& t, const Kernel& k, const std::string& out) {
  std::string env, options;
  if (t.header.capture) {
    for (const SelectorSetting& f : SelectorSettings(t.header.capture->selector)) {
      if (f.flag.empty()) env += f.env + "=" + ShellQuote(f.value) + " ";
      else options += " " + f.flag + " " + ShellQuote(f.value);
    }
    if (t.header.capture->outputs == "all") options += " --outputs all";
  }
  std::string cmd = env + "numtrace run -o " + ShellQuote(out);
  std::string steps;
  if (t.header.capture) {
    for (int64_t s : t.header.capture->steps) steps += (steps.empty() ? "" : ",") + std::to_string(s);
  }
  cmd += " --steps " + (steps.empty() ? std::string("all") : steps) + options;
  if (t.header.run && !t.header.run->label.empty()) cmd += " --label " + ShellQuote(t.header.run->label);
  cmd += " --dump seq:" + std::to_string(k.seq);
  std::string expect(t.Name(k));
  expect += "@";
  const auto buffers = t.BuffersOf(k);
  for (size_t i = 0; i < buffers.size(); ++i) expect += (i ? "," : "") + std::to_string(buffers[i].bytes);
  cmd += " --dump-expect " + ShellQuote(expect) + " --";
  if (t.header.run && !t.header.run->argv.empty()) {
    for (const std::string& arg : t.header.run->argv) cmd += " " + ShellQuote(arg);
  } else {
    cmd += " YOUR_COMMAND";  // the trace did not record one
  }
  return cmd;
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
