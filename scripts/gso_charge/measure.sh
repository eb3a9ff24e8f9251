#!/usr/bin/env bash
# Measures what TCP Small Queues is charged per packet when a TCP GSO skb is segmented in
# software because the egress device has no TSO/GSO (as with a Wi-Fi driver without TSO), with
# and without scatter-gather (NETIF_F_SG) on the device.
#
#   sudo scripts/gso_charge/measure.sh [-t SECONDS] [-k] [VARIANT...]
#
# VARIANT is DEV-QDISC[-app]: DEV is sg (tso/gso off), nosg (tso/gso/sg off) or tso (veth
# defaults, TSO on: baseline without software segmentation); QDISC is htb or tbf; -app makes
# the flow application-limited (iperf3 -b 30M -l 2500 -N) so GSO skbs end in a partial
# segment (n*2500 mod 1448: 1052, 656, 260, 1312, ...).
# Default: sg-htb nosg-htb sg-tbf nosg-tbf sg-htb-app nosg-htb-app tso-htb (about a minute).
#   -t SECONDS  length of each iperf3 run (default 5)
#   -k          keep the raw event files (their directory is printed) instead of deleting them
#   -b DIR      only build the BPF program, its loader (DIR/gso_charge) and DIR/constants, then
#               exit (wificc's kernel checks run the loader themselves)
#
# For each variant: two fresh network namespaces joined by a veth pair (MTU 1500); on the
# sender's veth `ethtool -K tso off gso off [sg off]` and a qdisc that holds packets (htb 50 Mbit/s:
# GSO skbs are segmented at dequeue, in validate_xmit_skb; tbf 50 Mbit/s burst 32 kbit: GSO skbs
# larger than the burst are segmented at enqueue, in tbf_segment); one iperf3 cubic bulk flow.
# BPF tracepoint programs (gso_charge.bpf.c; fentry/fexit and kprobes are not available on the
# kernel this was written on, BTF tracepoints are) record the skbs TCP hands to the device, the
# segmentation (wmem before/after, kernel stacks, the slab allocations it makes) and every frame
# reaching the driver.  analyze.py prints the table.  Everything (namespaces, qdiscs, BPF
# programs, processes, temporary files) is removed on exit, whatever the exit path.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SECS=5
KEEP=0
BUILD_ONLY=
while getopts "t:kb:h" opt; do
	case $opt in
	t) SECS=$OPTARG ;;
	k) KEEP=1 ;;
	b) BUILD_ONLY=$OPTARG ;;
	h) sed -n '2,26p' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
VARIANTS=("$@")
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(sg-htb nosg-htb sg-tbf nosg-tbf sg-htb-app nosg-htb-app tso-htb)

[ "$(id -u)" = 0 ] || { echo "measure.sh: must run as root" >&2; exit 1; }
for tool in clang bpftool gcc ip tc ethtool iperf3 python3; do
	command -v $tool >/dev/null || {
		echo "measure.sh: $tool missing (apt-get install clang llvm libbpf-dev bpftool gcc iproute2 ethtool iperf3 python3)" >&2
		exit 1
	}
done
[ -r /usr/include/bpf/bpf_helpers.h ] || { echo "measure.sh: libbpf-dev missing" >&2; exit 1; }

PORT=5301
NS_S=gsoc-snd-$$
NS_R=gsoc-rcv-$$
DEV_S=gsocs$$
DEV_R=gsocr$$
ADDR_S=198.18.0.1   # RFC 2544 benchmarking range, only inside the namespaces made here
ADDR_R=198.18.0.2
if [ -n "$BUILD_ONLY" ]; then
	mkdir -p "$BUILD_ONLY"
	WORK=$(cd "$BUILD_ONLY" && pwd)
	KEEP=1
else
	WORK=$(mktemp -d /tmp/gso_charge.XXXXXX)
fi
PIDS=()

teardown_variant() {
	local p ns try
	# Every background job, not only those in PIDS: a signal can run the clean-up between a
	# job's start and the line that records its pid. Then whatever still runs inside the
	# namespaces (an iperf3 whose `ip netns exec` mount namespace would keep them busy).
	for p in "${PIDS[@]}" $(jobs -p); do
		kill "$p" 2>/dev/null || true
	done
	for ns in "$NS_S" "$NS_R"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill "$p" 2>/dev/null || true
		done
	done
	for p in "${PIDS[@]}" $(jobs -p); do
		wait "$p" 2>/dev/null || true
	done
	PIDS=()
	# deleting the namespaces removes the veth pair and its qdisc with them; a failure is
	# retried and then reported, never silent
	for ns in "$NS_S" "$NS_R"; do
		for try in 1 2 3 4 5; do
			[ -e "/run/netns/$ns" ] || break
			ip netns del "$ns" 2>/dev/null && break
			[ "$try" = 5 ] && { ip netns del "$ns" >&2 || true; }
			sleep 0.2
		done
	done
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	teardown_variant
	if [ -n "$BUILD_ONLY" ]; then
		:
	elif [ "$KEEP" = 1 ] && [ "$rc" != 130 ]; then
		echo "raw events kept in $WORK"
	else
		rm -rf "$WORK"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building BPF program and loader in $WORK"
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$WORK/vmlinux.h"
clang -O2 -g -target bpf -mcpu=v3 -Wall -I"$WORK" -I"$HERE" \
	-c "$HERE/gso_charge.bpf.c" -o "$WORK/gso_charge.bpf.o"
bpftool gen skeleton "$WORK/gso_charge.bpf.o" name gso_charge_bpf >"$WORK/gso_charge.skel.h"
gcc -O2 -Wall -I"$WORK" -I"$HERE" "$HERE/gso_charge.c" -o "$WORK/gso_charge" -lbpf -lelf -lz

# slab and struct sizes the truesize formula in analyze.py needs
{
	bpftool btf dump file /sys/kernel/btf/vmlinux |
		sed -nE "s/^\[[0-9]+\] STRUCT '(sk_buff|skb_shared_info)' size=([0-9]+).*/\1=\2/p"
	echo "small_head=$(cat /sys/kernel/slab/skbuff_small_head/object_size 2>/dev/null || echo 0)"
	echo "kmalloc=$(awk '$1 ~ /^kmalloc-[0-9]+k?$/ {print $4}' /proc/slabinfo | tr '\n' ' ')"
} >"$WORK/constants"
sed 's/^/   /' "$WORK/constants"
[ -z "$BUILD_ONLY" ] || exit 0

setup_variant() {
	local v=$1
	ip netns add "$NS_S"
	ip netns add "$NS_R"
	ip link add "$DEV_S" netns "$NS_S" type veth peer name "$DEV_R" netns "$NS_R"
	ip -n "$NS_S" link set lo up
	ip -n "$NS_R" link set lo up
	ip -n "$NS_S" link set "$DEV_S" mtu 1500 up
	ip -n "$NS_R" link set "$DEV_R" mtu 1500 up
	ip -n "$NS_S" addr add "$ADDR_S/30" dev "$DEV_S"
	ip -n "$NS_R" addr add "$ADDR_R/30" dev "$DEV_R"
	case $v in
	sg-*) ip netns exec "$NS_S" ethtool -K "$DEV_S" tso off gso off >/dev/null ;;
	nosg-*) ip netns exec "$NS_S" ethtool -K "$DEV_S" tso off gso off sg off >/dev/null ;;
	tso-*) ;;
	*) echo "unknown variant $v" >&2; return 1 ;;
	esac
	case ${v%-app} in
	*-htb)
		tc -n "$NS_S" qdisc add dev "$DEV_S" root handle 1: htb default 1
		tc -n "$NS_S" class add dev "$DEV_S" parent 1: classid 1:1 htb rate 50mbit ceil 50mbit quantum 65536
		;;
	*-tbf)
		tc -n "$NS_S" qdisc add dev "$DEV_S" root tbf rate 50mbit burst 32kbit latency 100ms
		;;
	*) echo "unknown variant $v" >&2; return 1 ;;
	esac
	ip netns exec "$NS_S" ethtool -k "$DEV_S" |
		grep -E '^(scatter-gather|tcp-segmentation-offload|generic-segmentation-offload):' |
		tr '\n' ' ' >"$WORK/$v.features"
}

run_variant() {
	local v=$1 out="$WORK/$1"
	echo "== $v: $(cat "$WORK/$v.features")"
	ip netns exec "$NS_R" iperf3 -s -1 -p $PORT -B $ADDR_R >"$out.iperf_s.log" 2>&1 &
	PIDS+=($!)
	"$WORK/gso_charge" -p $PORT -o "$out" -t $((SECS + 30)) 2>"$out.loader.log" &
	PIDS+=($!)
	local i
	for i in $(seq 100); do
		[ -e "$out.ready" ] && break
		if ! kill -0 "${PIDS[-1]}" 2>/dev/null; then
			cat "$out.loader.log" >&2
			return 1
		fi
		sleep 0.1
	done
	[ -e "$out.ready" ] || { echo "loader did not attach" >&2; return 1; }
	sleep 0.5 # iperf3 server listening
	local app=()
	case $v in *-app) app=(-b 30M -l 2500 -N) ;; esac
	# in the background + wait, so that a signal runs the cleanup trap at once
	ip netns exec "$NS_S" iperf3 -c $ADDR_R -p $PORT -C cubic -t "$SECS" -i 0 "${app[@]}" \
		>"$out.iperf_c.log" 2>&1 &
	PIDS+=($!)
	wait "${PIDS[2]}" || { cat "$out.iperf_c.log" >&2; return 1; }
	grep -E 'sender|receiver' "$out.iperf_c.log" | sed 's/^/   /'
	sleep 0.5 # let the qdisc drain so the last segments are seen
	kill -INT "${PIDS[1]}" 2>/dev/null || true
	wait "${PIDS[1]}" 2>/dev/null || true
	# tc's view of the qdisc once the flow is done
	tc -n "$NS_S" -s qdisc show dev "$DEV_S" | head -3 | sed 's/^/   /'
	teardown_variant
}

for v in "${VARIANTS[@]}"; do
	setup_variant "$v"
	run_variant "$v"
done

python3 "$HERE/analyze.py" "$WORK" "${VARIANTS[@]}"

leftover=$(ip netns list | grep -c '^gsoc-' || true)
[ "$leftover" = 0 ] || echo "warning: $leftover gsoc-* namespaces left" >&2
