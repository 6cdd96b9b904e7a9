#!/usr/bin/env bash
# Tools the Python tests need besides Python packages: tshark reads our pcap files,
# chromium renders the HTML report, ns (Debian's ns2 package, ns-2.35) is the reference
# for profile = "ns2" and the ns-2 queue defaults (tests/test_ns2_*.py) and runs the studies' ns-2
# reconstructions. Missing ones are installed with apt-get when we are
# root (as on a fresh CI machine); progress goes to stderr. Prints (stdout) the tools
# that are still missing, for the tests to skip with a loud reason; nothing otherwise.
set -uo pipefail
need=()
command -v tshark >/dev/null 2>&1 || need+=(tshark)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
command -v ns >/dev/null 2>&1 || need+=(ns2)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "make test: installing ${need[*]} with apt-get (the tests need them)" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}"; } >/dev/null 2>&1 \
      || echo "make test: apt-get could not install ${need[*]}" >&2
  else
    echo "make test: ${need[*]} missing and cannot be installed here (needs root and apt-get)" >&2
  fi
fi
still=()
command -v tshark >/dev/null 2>&1 || still+=(tshark)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || still+=(chromium)
command -v ns >/dev/null 2>&1 || still+=(ns)
if [ ${#still[@]} -gt 0 ]; then
  echo "make test: WARNING: tests that need ${still[*]} will be SKIPPED" >&2
  echo "${still[*]}"
fi
