#!/usr/bin/env bash
# The hooks log's names follow the escape rule of numtrace's printed lines
# (common/text/terminal_safe.h): one line per event whatever a module is
# called, nothing a terminal acts on written raw, and cut at the trace's
# 512-byte cap (common/format/provenance.h) so the log shows what the kernels
# are stamped with.
set -euo pipefail
src="$1"
PYTHONPATH="$src/scripts/hooks" python3 - <<'PY'
import numtrace_provenance as p
cases = {
    "a\x1b[31mRED": "a^[[31mRED",           # ESC as numtrace-diff prints it
    "b\rcar": "b\\x0dcar",
    "e\tTab f\nnl": "e\\x09Tab\\x20f\\x0anl",  # the space separates the fields
    "d\x85nel": "d\\xc2\\x85nel",            # C1 control, each UTF-8 byte
    "c\u2028sep": "c\\xe2\\x80\\xa8sep",      # line separator
    "\u202eabc": "\\xe2\\x80\\xaeabc",        # right-to-left override
    "del\x7f": "del\\x7f",
    "caf\u00e9": "caf\u00e9",                # printable UTF-8 unchanged
    "layers.0.attn": "layers.0.attn",
}
bad = [(k, p._printable(k), v) for k, v in cases.items() if p._printable(k) != v]
for k, got, want in bad:
    print("hooks_log_escape_test: %r -> %r, want %r" % (k, got, want))
long = p._printable("\u00e9" * 400)
if len(long.encode()) != 512 or long != "\u00e9" * 256:
    bad.append(1); print("hooks_log_escape_test: 800 bytes kept as %d" % len(long.encode()))
line = "step=0 scope=%s op=x\n" % p._printable("x\n\r\x1b\u2028\u0085y")
if len(line.splitlines()) != 1 or any(ord(c) < 0x20 and c != "\n" for c in line):
    bad.append(1); print("hooks_log_escape_test: not one inert line: %r" % line)
raise SystemExit(1 if bad else 0)
PY
echo "hooks_log_escape_test: ok"
