// The HTML page of `numtrace-diff --tensors`: self-contained (inline CSS,
// no script), one card per buffer pair with its numbers, the ULP histogram
// and a strip of where along the buffer the mismatches lie.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analyzer/report/html_escape.h"
#include "analyzer/report/tensor_report.h"

namespace numtrace::analyzer {
namespace {

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string At(const std::optional<ElementAt>& e) {
  if (!e) return "&ndash;";
  return "[" + std::to_string(e->index) + "] A " + TensorValue(e->a) + ", B " + TensorValue(e->b);
}

void Histogram(const BufferComparison& c, std::string* out) {
  uint64_t top = 1;
  for (uint64_t v : c.ulp) top = std::max(top, v);
  out->append("<div class=hist>");
  for (int i = 0; i < kUlpBuckets; ++i) {
    const int h = c.ulp[i] ? std::max<int>(2, static_cast<int>(100.0 * c.ulp[i] / top)) : 0;
    out->append("<div class=col><div class=bar style=\"height:" + std::to_string(h) + "px\" title=\"" +
                std::to_string(c.ulp[i]) + " elements\"></div><div class=lab>" +
                Esc(kUlpBucketNames[i]) + "<br>" + std::to_string(c.ulp[i]) + "</div></div>");
  }
  out->append("</div>");
}

void Strip(const BufferComparison& c, std::string* out) {
  uint64_t top = 1;
  for (uint64_t v : c.strip) top = std::max(top, v);
  out->append("<div class=strip title=\"mismatches along the buffer, element 0 at the left\">");
  for (int i = 0; i < kStripBins; ++i) {
    const double f = static_cast<double>(c.strip[i]) / top;
    char style[96];
    std::snprintf(style, sizeof(style), "background:rgba(200,30,30,%.2f)", c.strip[i] ? 0.25 + 0.75 * f : 0.0);
    out->append("<span style=\"" + std::string(style) + "\" title=\"elements " +
                std::to_string(c.n * i / kStripBins) + "..: " + std::to_string(c.strip[i]) +
                " mismatched\"></span>");
  }
  out->append("</div>");
}

}  // namespace

std::string TensorHtmlReport(const TensorDiff& d) {
  std::string out =
      "<!doctype html><html><head><meta charset=utf-8><title>numtrace tensor diff</title><style>"
      "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}"
      "h1{font-size:1.3em}.v-diverged{color:#b00}.v-within_tolerance{color:#a60}.v-identical{color:#070}"
      ".card{border:1px solid #ccc;border-radius:6px;padding:.8em 1em;margin:1em 0}"
      ".card.bad{border-color:#c33}.card.same{padding:.3em 1em;margin:.4em 0;color:#555}table{border-collapse:collapse}td{padding:1px 10px 1px 0}"
      ".hist{display:flex;align-items:flex-end;gap:6px;height:130px;margin:.5em 0}"
      ".col{display:flex;flex-direction:column;align-items:center;width:56px}"
      ".bar{width:40px;background:#36c}.lab{font-size:11px;text-align:center}"
      ".strip{display:flex;height:18px;border:1px solid #999;margin:.4em 0}.strip span{flex:1}"
      ".warn{color:#a60}code{font-size:12px}</style></head><body>";
  out += "<h1>numtrace tensor diff: <span class=\"v-" + std::string(VerdictName(d.verdict)) + "\">" +
         std::string(VerdictName(d.verdict)) + "</span></h1>";
  auto side = [&](const char* label, const std::string& path, const std::optional<uint64_t>& seq,
                  const std::string& name) {
    out += "<div><b>" + std::string(label) + "</b> <code>" + Esc(path) + "</code>";
    if (seq) out += " seq " + std::to_string(*seq);
    out += " <code>" + Esc(name) + "</code></div>";
  };
  side("A", d.path_a, d.seq_a, d.name_a);
  side("B", d.path_b, d.seq_b, d.name_b);
  out += "<div>tolerance: rtol " + TensorValue(d.tolerance.rtol) + ", atol " + TensorValue(d.tolerance.atol) + "</div>";
  for (const std::string& w : d.warnings) out += "<div class=warn>warning: " + Esc(w) + "</div>";
  for (const TensorPair& p : d.pairs) {
    const BufferComparison& c = p.cmp;
    if (c.identical()) {  // one line: the page is about what differs
      out += "<div class=\"card same\"><b>" + Esc(TensorPairName(p)) + "</b> (" + std::string(RoleName(p.role)) +
             ", " + std::string(DTypeName(p.dtype)) + "[" + std::to_string(c.n) + "]): bitwise equal</div>";
      continue;
    }
    out += std::string("<div class=\"card") + (c.identical() ? "" : " bad") + "\"><b>" + Esc(TensorPairName(p)) +
           "</b> (" + std::string(RoleName(p.role)) + ", " + std::string(DTypeName(p.dtype)) + "[" +
           std::to_string(c.n) + "])<table>";
    auto row = [&](const char* k, const std::string& v) {
      out += "<tr><td>" + std::string(k) + "</td><td>" + v + "</td></tr>";
    };
    row("equal", std::to_string(c.equal) + " of " + std::to_string(c.n));
    row("mismatched", std::to_string(c.mismatched));
    row("first mismatch", At(c.first_mismatch));
    row("max abs error", c.max_abs ? TensorValue(c.max_abs_value) + " at " + At(c.max_abs) : "0");
    row("max rel error", c.max_rel ? TensorValue(c.max_rel_value) + " at " + At(c.max_rel) : "0");
    row("cosine", TensorValue(c.cosine));
    row("NaN/Inf", "A " + std::to_string(c.nonfinite_a.nan + c.nonfinite_a.inf) + ", B " +
                       std::to_string(c.nonfinite_b.nan + c.nonfinite_b.inf));
    out += "</table>";
    if (c.has_ulp) {
      out += "<div>ULP distance (max " + std::to_string(c.max_ulp) + ")</div>";
      Histogram(c, &out);
    }
    out += "<div>where the mismatches lie</div>";
    Strip(c, &out);
    out += "<div><code>" + Esc(p.file_a) + "</code> vs <code>" + Esc(p.file_b) + "</code></div></div>";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace numtrace::analyzer
