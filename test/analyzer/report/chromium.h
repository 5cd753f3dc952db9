// File: test/analyzer/report/chromium.h
//
// Runs Debian's chromium headless on a report page for the browser tests:
// the page is written under the build tree and its DOM is returned after the
// page's own script (and any probe script the test appended) ran. Each page
// gets its own browser profile, because ctest -j runs the browser tests
// concurrently and two chromium processes cannot share one.
//
// Example:
//   if (Chromium().empty()) GTEST_SKIP() << "chromium not installed";
//   std::string dom = DumpDom(HtmlReport(report, {}), "html_report_x.html");
#ifndef NUMTRACE_TEST_ANALYZER_REPORT_CHROMIUM_H_
#define NUMTRACE_TEST_ANALYZER_REPORT_CHROMIUM_H_

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include "test/util/test_paths.h"

namespace numtrace::analyzer::testing {

// The browser's path, "" when none is installed (the tests then skip).
inline std::string Chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

inline std::string RunCapture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

inline std::string ChromiumFlags(const std::string& file) {
  return " --headless --no-sandbox --disable-gpu --disable-background-networking"
         " --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage"
         " --user-data-dir=" + (std::filesystem::temp_directory_path() / ("numtrace-chromium-" + file)).string();
}

// Writes `html` to NUMTRACE_BINARY_DIR/file and returns chromium's DOM of it.
// The report's table is inflated asynchronously (html_report.h): the virtual
// time budget lets chromium run the page's pending work before it dumps the
// DOM (virtual time: an idle page does not wait for it in real time). Probes
// appended to a report wait on window.numtraceReady.
inline std::string DumpDom(const std::string& html, const std::string& file) {
  std::filesystem::path path = std::filesystem::path(NUMTRACE_BINARY_DIR) / file;
  std::ofstream(path, std::ios::binary) << html;
  return RunCapture("timeout 120 " + Chromium() + ChromiumFlags(file) +
                    " --window-size=1400,1000 --virtual-time-budget=60000 --dump-dom file://" + path.string() + " 2>/dev/null");
}

// Appends `probe` (a <script> that waits for window.numtraceReady and then
// appends <pre id="probe">JSON</pre>) to the page, runs it under a name of
// its own (`stem` + pid: ctest runs tests in parallel processes), cleans up
// and returns the probe's text, or "" with the start of the DOM in
// `*dom_head` when the probe did not run. The probe's JSON must not hold
// '<', '>' or '&' (the DOM serializer escapes text).
inline std::string RunProbe(std::string html, const std::string& probe, const std::string& stem,
                            std::string* dom_head) {
  html.insert(html.rfind("</body>"), probe);
  const std::string file = stem + "_" + std::to_string(::getpid()) + ".html";
  const std::string dom = DumpDom(html, file);
  std::filesystem::remove(std::filesystem::path(NUMTRACE_BINARY_DIR) / file);
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("numtrace-chromium-" + file));
  const std::string open = "<pre id=\"probe\">";
  const size_t begin = dom.find(open);
  if (begin == std::string::npos) {
    *dom_head = dom.substr(0, 3000);
    return "";
  }
  return dom.substr(begin + open.size(), dom.find("</pre>", begin) - begin - open.size());
}

}  // namespace numtrace::analyzer::testing

#endif  // NUMTRACE_TEST_ANALYZER_REPORT_CHROMIUM_H_
