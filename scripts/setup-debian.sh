#!/usr/bin/env bash
# Debian packages wificc needs beyond Python and Rust: a C toolchain for the Rust build,
# iproute2 for the emulator and the BPF tests' namespaces, clang, llvm, libbpf-dev and bpftool to
# build and load the BPF congestion controls (bpf/), iperf3 and ethtool for real-kernel traffic and
# offload settings (scripts/gso_charge), chromium in
# which the tests render the HTML report.
# Idempotent; skipped when everything is present or when not root.
set -euo pipefail
pkgs=(build-essential pkg-config iproute2 clang llvm libbpf-dev bpftool iperf3 ethtool chromium)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "setup-debian: missing ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}"
