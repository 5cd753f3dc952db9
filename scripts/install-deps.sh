#!/usr/bin/env bash
# Installs the Debian packages numtrace builds and tests with. Idempotent:
# runs apt-get (update included) only when something is missing.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  ccache                     # shares objects between the build and check-standalone.sh's clone
  libabsl-dev libspdlog-dev libfmt-dev libsimdjson-dev libcli11-dev zlib1g-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev   # libFuzzer targets
  chromium                   # headless checks of the HTML report
  python3-numpy              # checks that tensor dumps (.npy) load in NumPy
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "numtrace: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
