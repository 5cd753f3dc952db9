#!/usr/bin/env bash
# NumPy reads the dumps: every dtype's .npy as the dumper lays it out
# (written by write_npy_samples through the same code) and a real dump of the
# simulated loop, checked against the sidecar and the raw bytes. Skips (77)
# with the reason when no python3 with numpy is installed.
set -euo pipefail
src="$1" bin="$2"
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then py="$p"; break; fi
done
if [ -z "$py" ]; then
  echo "SKIPPED: numpy is not installed (apt-get install python3-numpy, or pip install numpy)"
  exit 77
fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$bin/test-bin/write_npy_samples" "$tmp/samples"
NUMTRACE_OUTPUT_DIR="$tmp/run" NUMTRACE_STEPS=2 NUMTRACE_DUMP='regex:.' "$bin/bin/numtrace-sim" --steps 3 >/dev/null
"$py" - "$tmp" <<'PY'
import glob, json, os, sys
import numpy as np
tmp = sys.argv[1]
expect = {"f64": "<f8", "f32": "<f4", "f16": "<f2", "bf16": "<u2", "f8e4m3": "|u1", "f8e5m2": "|u1",
          "i64": "<i8", "i32": "<i4", "i16": "<i2", "i8": "|i1", "u8": "|u1", "bool": "|b1", "raw": "|u1"}
def check(path, descr, nbytes, payload):
    a = np.load(path, allow_pickle=False)
    assert a.dtype.str == descr, (path, a.dtype.str, descr)
    assert a.ndim == 1 and a.nbytes == nbytes, (path, a.shape, nbytes)
    assert a.tobytes() == payload, path
for dtype, descr in expect.items():
    p = os.path.join(tmp, "samples", dtype + ".npy")
    raw = open(p + ".bytes", "rb").read()
    check(p, descr, len(raw), raw)
n = 0
for side in glob.glob(os.path.join(tmp, "run", "dump_*.json")):
    d = json.load(open(side))
    assert d["format"] == "numtrace-dump" and d["version"] == 1
    for b in d["buffers"]:
        for when in ("before", "after"):
            if when not in b:
                continue
            p = os.path.join(tmp, "run", b[when])
            data = open(p, "rb").read()
            check(p, expect[b["dtype"]], b["bytes"], data[len(data) - b["bytes"]:])
            n += 1
assert n > 0, "no dumps"
print("dump_numpy_test: numpy read %d sample and %d dumped arrays" % (len(expect), n))
PY
