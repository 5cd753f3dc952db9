#include "analyzer/report/dump_commands.h"

#include <filesystem>
#include <vector>

#include "common/format/dump_record.h"

namespace numtrace::analyzer {
namespace {

// The settings in capture.selector (written by the shim's
// Config::SelectorText: "mode=M steps=S [launch_skip=N] [launch_count=N]
// [kernel=F]... [exclude=F]... [min_bytes=N]") that change which launches a
// run captures, hence its seq numbers, as NUMTRACE_* assignments.
std::vector<std::string> SelectorEnv(std::string_view selector) {
  static constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
      {"mode=", "NUMTRACE_STEP_MODE"},     {"launch_skip=", "NUMTRACE_LAUNCH_SKIP"},
      {"launch_count=", "NUMTRACE_LAUNCH_COUNT"}, {"kernel=", "NUMTRACE_KERNEL"},
      {"exclude=", "NUMTRACE_KERNEL_EXCLUDE"},  {"min_bytes=", "NUMTRACE_MIN_BYTES"},
      {"steps=", ""}};
  // Split at " key=" boundaries: a value (a regex) may hold spaces.
  std::vector<std::pair<std::string_view, std::string>> found;
  size_t pos = 0;
  while (pos < selector.size()) {
    std::string_view key, var;
    for (const auto& [k, v] : kKeys) {
      if (selector.substr(pos).starts_with(k)) key = k, var = v;
    }
    size_t next = selector.size();
    for (const auto& [k, v] : kKeys) {
      size_t at = selector.find(" " + std::string(k), pos + 1);
      if (at != std::string_view::npos && at < next) next = at;
    }
    if (!key.empty() && !var.empty()) {
      std::string value(selector.substr(pos + key.size(), next - pos - key.size()));
      bool merged = false;
      for (auto& [v2, val] : found) {
        if (v2 == var) val += ";" + value, merged = true;  // several filters: ';'-separated
      }
      if (!merged) found.emplace_back(var, value);
    }
    pos = next == selector.size() ? next : next + 1;
  }
  std::vector<std::string> env;
  for (const auto& [var, value] : found) {
    if (var == "NUMTRACE_STEP_MODE" && value == "mark") continue;  // the default
    env.push_back(std::string(var) + "=" + ShellQuote(value));
  }
  return env;
}

std::string DumpDir(const Trace& t, uint64_t seq) {
  std::string dir = std::filesystem::path(t.path).parent_path().string();
  if (dir.empty() || dir == ".") dir = "numtrace";
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "-dump-seq" + std::to_string(seq);
}

std::string Capture(const Trace& t, const Kernel& k, const std::string& out) {
  std::string cmd;
  if (t.header.capture) {
    for (const std::string& e : SelectorEnv(t.header.capture->selector)) cmd += e + " ";
    if (t.header.capture->outputs == "all") cmd += "NUMTRACE_OUTPUTS=all ";
  }
  cmd += "scripts/numtrace run --out " + ShellQuote(out);
  std::string steps;
  if (t.header.capture) {
    for (int64_t s : t.header.capture->steps) steps += (steps.empty() ? "" : ",") + std::to_string(s);
  }
  cmd += " --steps " + (steps.empty() ? std::string("all") : steps);
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

DumpCommands BuildDumpCommands(const Trace& a, const Kernel& ka, const Trace& b, const Kernel& kb) {
  DumpCommands c;
  const std::string out_a = DumpDir(a, ka.seq), out_b = DumpDir(b, kb.seq);
  c.capture_a = Capture(a, ka, out_a);
  c.capture_b = Capture(b, kb, out_b);
  c.tensors = "scripts/numtrace diff --tensors " + ShellQuote(out_a + "/" + DumpSidecarName(a.rank, ka.seq)) +
              " " + ShellQuote(out_b + "/" + DumpSidecarName(b.rank, kb.seq));
  return c;
}

}  // namespace numtrace::analyzer
