#include "analyzer/report/steps_report.h"

#include <string_view>

#include "analyzer/report/dump_commands.h"
#include "common/names/normalize.h"
#include "common/text/terminal_safe.h"

namespace numtrace::analyzer {
namespace {

void NameOrNull(const Trace& t, std::optional<StringId> id, JsonWriter& w) {
  if (id) w.String(t.strings.View(*id));
  else w.Null();  // past the end of the shorter step
}

void Nonfinite(const Trace& t, const std::optional<StepNonfinite>& n, JsonWriter& w) {
  if (!n) {
    w.Null();
    return;
  }
  w.BeginObject().Key("step").Int(n->step).Key("index").Uint(n->index);
  w.Key("name").String(t.strings.View(n->name)).EndObject();
}

std::string Short(const Trace& t, std::optional<StringId> id) {
  if (!id) return "(none: the step ends here)";
  return TerminalSafe(ShortName(t.strings.View(*id)));
}

}  // namespace

std::optional<int64_t> StepToCapture(const StepsResult& s) {
  if (s.first_differing) return s.first_differing;
  std::optional<int64_t> step;
  for (const auto& n : {s.nonfinite_a, s.nonfinite_b}) {
    if (n && (!step || n->step < *step)) step = n->step;
  }
  return step;
}

void WriteStepsJson(const RankDiff& rd, bool strip, JsonWriter& w) {
  if (!rd.result->steps) return;
  const StepsResult& s = *rd.result->steps;
  w.Key("steps").BeginObject();
  w.Key("compared").Uint(s.compared).Key("differing").Uint(s.differing);
  w.Key("digests").BeginObject().Key("a").Bool(s.a_has_digests).Key("b").Bool(s.b_has_digests).EndObject();
  w.Key("first_differing");
  s.first_differing ? w.Int(*s.first_differing) : w.Null();
  w.Key("first_kind");
  s.first_differing ? w.String(StepDifferenceName(s.first_is_structure ? StepDifference::kKernels : StepDifference::kDigest))
                   : w.Null();
  w.Key("first_kernel");
  if (s.first_differing) {
    w.BeginObject().Key("index").Uint(s.first_index).Key("a_name");
    NameOrNull(*rd.a, s.a_name, w);
    w.Key("b_name");
    NameOrNull(*rd.b, s.b_name, w);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("first_nonfinite").BeginObject().Key("a");
  Nonfinite(*rd.a, s.nonfinite_a, w);
  w.Key("b");
  Nonfinite(*rd.b, s.nonfinite_b, w);
  w.EndObject();
  const std::optional<int64_t> step = StepToCapture(s);
  w.Key("capture_step");
  step ? w.Int(*step) : w.Null();
  // `capture`: side A's command (the contract's field); `capture_b`: B's.
  std::optional<StepCapture> capture;
  if (step) capture = BuildStepCapture(*rd.a, *rd.b, *step);
  w.Key("capture");
  capture ? w.String(capture->command_a) : w.Null();
  w.Key("capture_b");
  capture ? w.String(capture->command_b) : w.Null();
  w.Key("notes").BeginArray();
  for (const std::string& n : s.notes) w.String(n);
  w.EndArray();
  if (strip) {
    w.Key("strip").BeginObject().Key("steps").BeginArray();
    for (int64_t v : s.strip_steps) w.Int(v);
    w.EndArray().Key("states").BeginArray();
    for (StepState v : s.strip) w.String(StepStateName(v));
    w.EndArray().EndObject();
  }
  w.EndObject();
}

std::string StepsTerminal(const RankDiff& rd, bool color) {
  if (!rd.result->steps) return "";
  const StepsResult& s = *rd.result->steps;
  auto c = [&](std::string_view code, std::string_view text) {
    return color ? std::string(code) + std::string(text) + "\033[0m" : std::string(text);
  };
  // A step's digests are of kernel launches or, at operator level, of
  // operator calls: the lines say which.
  const bool ops = rd.a->capture_level() == CaptureLevel::kOps;
  const std::string unit = ops ? "operator call" : "launch";
  std::string out = "  steps: " + std::to_string(s.compared) + " compared by digest";
  if (s.first_differing) {
    out += ", " + std::to_string(s.differing) + " differ; first differing step: " +
           c("\033[31m\033[1m", std::to_string(*s.first_differing)) + "\n";
    out += s.first_is_structure
               ? std::string("    the ") + (ops ? "operator" : "kernel") +
                     " sequences part there (count or names differ) at " + unit + " " +
                     std::to_string(s.first_index) + " of the step\n"
               : "    first differing " + unit + ": index " + std::to_string(s.first_index) + " of the step\n";
    out += "      A: " + Short(*rd.a, s.a_name) + "\n      B: " + Short(*rd.b, s.b_name) + "\n";
  } else if (s.compared != 0) {
    out += ", every one " + c("\033[32m", "identical") + "\n";
  } else {
    out += "\n";
  }
  for (bool side_a : {true, false}) {
    const auto& n = side_a ? s.nonfinite_a : s.nonfinite_b;
    if (!n) continue;
    const Trace& t = side_a ? *rd.a : *rd.b;
    out += std::string("    first NaN/Inf step in ") + (side_a ? "A" : "B") + ": " +
           c("\033[31m", std::to_string(n->step)) + ", " + unit + " " + std::to_string(n->index) + " " +
           TerminalSafe(ShortName(t.strings.View(n->name))) + "\n";
  }
  for (const std::string& n : s.notes) out += "    " + c("\033[33m", "note: ") + TerminalSafe(n) + "\n";
  if (const std::optional<int64_t> step = StepToCapture(s)) {
    const StepCapture cap = BuildStepCapture(*rd.a, *rd.b, *step);
    out += "    capture step " + std::to_string(*step) + " in full";
    std::string left_out = cap.left_out_a;
    if (cap.left_out_b != cap.left_out_a) {
      left_out = (cap.left_out_a.empty() ? "" : "A: " + cap.left_out_a + (cap.left_out_b.empty() ? "" : ", ")) +
                 (cap.left_out_b.empty() ? "" : "B: " + cap.left_out_b);
    }
    if (!left_out.empty()) {
      out += " (without " + TerminalSafe(left_out) + ": the digests cover every " + unit + " of the step)";
    }
    out += ", then diff:\n";
    out += "      " + TerminalSafe(cap.command_a) + "\n";
    out += "      " + TerminalSafe(cap.command_b) + "\n";
    out += "      " + TerminalSafe(cap.diff) + "\n";
    if (cap.worker) {
      out += "    " + c("\033[33m", "note: ") +
             "these are the workers' own command lines (the traces record a rank): start each the way the "
             "launcher started it, with its rank environment\n";
    }
  }
  return out;
}

}  // namespace numtrace::analyzer
