#!/usr/bin/env bash
# npusim setup: installs whatever Debian packages are missing, builds, and then
#   ./setup.sh          runs the default trace (traces/chain.json)
#   ./setup.sh test     runs the whole test suite (what CI runs)
#   ./setup.sh build    only builds
# Build directory: build/ (override with NPUSIM_BUILD_DIR). `test` then builds
# and runs the same suite under AddressSanitizer + UndefinedBehaviorSanitizer in
# build-asan/ (options and logs: tests/sanitizer/); NPUSIM_SANITIZE=0 skips it.
set -euo pipefail
cd "$(dirname "$0")"
what=${1:-run}

# What the build and a run need (pybind11-dev and python3-dev: the Python
# module, docs/python.md); `test` adds what only the tests use: catch2 (the
# unit tests), chromium (the report test loads `npusim report` pages in
# headless chromium), python3-distributed (`npusim sweep --scheduler` runs
# points on Dask: tests/sweep/sweep_dask_test.py), python3-pytest and
# python3-numpy (the Python module's tests: tests/python/).
build_packages=(build-essential cmake pkg-config libsystemc-dev libboost-dev nlohmann-json3-dev libcli11-dev zlib1g-dev libdeflate-dev
                python3 python3-dev pybind11-dev)
test_packages=(catch2 chromium python3-distributed python3-pytest python3-numpy)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
packages=("${build_packages[@]}")
if [ "$what" = test ]; then packages+=("${test_packages[@]}"); fi
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: not root and no sudo: install them as root: apt-get install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  # No recommended packages: python3-distributed's would add pandas, scipy,
  # numba and matplotlib (about 370 more packages and minutes of CI), and
  # nothing here uses them.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
# Without Catch2 (run and build install only the build's packages) the build
# leaves the tests out; `test` installs it and turns them on.
testing=ON
installed catch2 || testing=OFF
build_one() {  # build_one DIR [cmake args...]: configures, builds all (or $build_target)
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "-DBUILD_TESTING=$testing" "$@" >/dev/null
  local targets=()
  if [ -n "${build_target:-}" ]; then
    targets=(--target $build_target)
    # The Python module, when this build has it (python/ was configured).
    [ -d "$dir/python" ] && targets+=(npusim_python)
  fi
  cmake --build "$dir" -j "$jobs" "${targets[@]}"
}

case "$what" in
  run)
    dir=${NPUSIM_BUILD_DIR:-build}
    build_target=npusim build_one "$dir"  # npusim, its runner and the Python module: no test binary to wait for
    "$dir/npusim" run traces/chain.json --out npusim_out/chain
    ;;
  build)
    build_one "${NPUSIM_BUILD_DIR:-build}"
    ;;
  test)
    dir=${NPUSIM_BUILD_DIR:-build}
    testing=ON
    # The whole suite, even if this build directory was once narrowed to a few
    # tests, in the default unity batches (-U drops a developer's setting).
    suite_sources=("-DNPUSIM_TEST_GLOB=test_*" -UNPUSIM_TEST_UNITY_BATCH)
    build_one "$dir" "${suite_sources[@]}"
    status=0
    # Every ctest entry must run a test case (-w NoTests in tests/CMakeLists.txt),
    # ctest must find entries at all, and every test case must run exactly once.
    suite() {  # suite DIR: 0 if every entry passed and every test case ran once
      local log rc=0
      log=$(cd "$1" && pwd)/tests/ran.log
      rm -f "$log"
      # ulimit -f: no file of the run may pass 4 GiB (1 KiB blocks), so a runaway
      # test fails (SIGXFSZ) instead of filling the disk (docs/testing.md).
      (ulimit -f 4194304
       NPUSIM_TEST_RAN_LOG="$log" ctest --test-dir "$1" --no-tests=error --output-on-failure -j "$jobs") || rc=1
      tests/ran_once.sh "$1/tests/npusim_tests" "$log" || rc=1
      return $rc
    }
    suite "$dir" || status=1
    if [ "${NPUSIM_SANITIZE:-1}" != 0 ]; then
      # -O1 -g1: half the compile time of -O2 -g, line numbers in reports, asserts on.
      # A unity build of the model too (batches of 8 sources): these objects are
      # built only for this suite, where build/ keeps one object per source so
      # that an edit rebuilds one file (docs/testing.md, "CI time").
      build_one build-asan "${suite_sources[@]}" -DNPUSIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DCMAKE_UNITY_BUILD=ON
      . tests/sanitizer/sanitizer.sh
      sanitizer_env build-asan/sanitizer-logs
      echo "setup: the test suite under ASan + UBSan (build-asan/)"
      suite build-asan || status=1
      sanitizer_check build-asan/sanitizer-logs || status=1
    fi
    exit "$status"
    ;;
  *)
    echo "usage: ./setup.sh [run|test|build]" >&2; exit 2 ;;
esac
