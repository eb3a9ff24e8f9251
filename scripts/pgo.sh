#!/usr/bin/env bash
# Profile-guided optimisation of the simulator: build the training run
# (crates/wificc-core/examples/pgo_train.rs) instrumented, run it, and merge its profile into
# target/pgo/wificc.profdata, which `make build` then passes to rustc (-Cprofile-use). PGO
# changes code layout and inlining, never results (the trainer checks the golden digests).
# llvm-profdata must match rustc's LLVM: it comes from the toolchain's llvm-tools component
# (installed here with rustup when missing).
# Exit status 3: PGO is not available on this machine (the caller builds without it).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/target/pgo"
SECONDS_PER_WORKLOAD="${PGO_SECONDS:-5}"

host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null; then
    rustup component add llvm-tools >&2 || true
fi
if [ ! -x "$profdata" ]; then
    echo "pgo: llvm-profdata not found at $profdata (rustup component add llvm-tools); building without PGO" >&2
    exit 3
fi

rm -rf "$OUT/raw"
mkdir -p "$OUT/raw"
echo "pgo: building the instrumented training run" >&2
RUSTFLAGS="-Cprofile-generate=$OUT/raw" cargo build --release -q --example pgo_train \
    --target-dir "$ROOT/target/pgo-gen" --manifest-path "$ROOT/Cargo.toml"
echo "pgo: training ($SECONDS_PER_WORKLOAD s per workload)" >&2
LLVM_PROFILE_FILE="$OUT/raw/%m-%p.profraw" "$ROOT/target/pgo-gen/release/examples/pgo_train" \
    "$SECONDS_PER_WORKLOAD" 2>/dev/null
"$profdata" merge -o "$OUT/wificc.profdata.tmp" "$OUT/raw"
mv "$OUT/wificc.profdata.tmp" "$OUT/wificc.profdata"
rm -rf "$OUT/raw"
echo "pgo: wrote $OUT/wificc.profdata" >&2
