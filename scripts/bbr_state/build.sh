#!/usr/bin/env bash
# Build the bbr_state probe into DIR (default: a directory under /tmp): vmlinux.h from the
# running kernel's BTF, the BPF object, its skeleton and the loader. Prints the loader's path.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${1:-$(mktemp -d /tmp/bbr_state.XXXXXX)}"
mkdir -p "$WORK"
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$WORK/vmlinux.h"
clang -O2 -g -target bpf -mcpu=v3 -Wall -I"$WORK" -I"$HERE" -c "$HERE/bbr_state.bpf.c" -o "$WORK/bbr_state.bpf.o"
bpftool gen skeleton "$WORK/bbr_state.bpf.o" name bbr_state_bpf >"$WORK/bbr_state.skel.h"
gcc -O2 -Wall -I"$WORK" -I"$HERE" "$HERE/bbr_state.c" -o "$WORK/bbr_state" -lbpf -lelf -lz
echo "$WORK/bbr_state"
