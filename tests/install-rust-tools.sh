#!/usr/bin/env bash
# The Rust lint tools `make lint` needs besides cargo: rustfmt (`cargo fmt`) and clippy
# (`cargo clippy`). Missing ones are added with `rustup component add` when rustup is there
# (progress goes to stderr). Prints (stdout) the tools that are still missing, for
# `make lint` to skip with a loud warning; nothing otherwise.
set -uo pipefail
have() { cargo "$1" --version >/dev/null 2>&1; }
need=()
have fmt || need+=(rustfmt)
have clippy || need+=(clippy)
if [ ${#need[@]} -gt 0 ]; then
  if command -v rustup >/dev/null 2>&1; then
    echo "make lint: installing ${need[*]} with rustup (the lint gate needs them)" >&2
    rustup component add "${need[@]}" >/dev/null 2>&1 \
      || echo "make lint: rustup could not install ${need[*]}" >&2
  else
    echo "make lint: ${need[*]} missing and cannot be installed here (needs rustup)" >&2
  fi
fi
still=()
have fmt || still+=(rustfmt)
have clippy || still+=(clippy)
if [ ${#still[@]} -gt 0 ]; then
  echo "make lint: WARNING: the ${still[*]} gate(s) will be SKIPPED" >&2
  echo "${still[*]}"
fi
