// SPDX-License-Identifier: GPL-2.0
/* What TCP Small Queues is charged when the stack software-segments a TCP GSO
 * skb (tcp_gso_segment via validate_xmit_skb, or tbf_segment), observed from BTF
 * tracepoints only (fentry/fexit and kprobes are not available on the target
 * kernel).  Only sockets whose destination port is target_dport are traced.
 *
 *   net_dev_queue       skb as TCP built it (truesize TCP charged), before the qdisc
 *   qdisc_dequeue       GSO skb leaving the qdisc: opens a per-CPU segmentation window
 *   kmalloc / kmem_cache_alloc  allocations inside the window (segment heads), with stack
 *   consume_skb         the GSO skb freed by the GSO engine: closes the window
 *   net_dev_start_xmit  every frame reaching the driver (the segments), with truesize
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "gso_charge.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u16 target_dport = 0; /* host order; set by the loader */
/* The network namespace of the traced sockets (its nsfs inode); 0: any. Other runs on the
 * machine use the same ports in their own namespaces. */
const volatile __u32 target_netns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 8192);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));
} stacks SEC(".maps");

/* ring buffer reservations that failed, by event kind */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct window {
	__u64 skb;   /* GSO skb being segmented on this CPU, 0 if none */
	__u64 sk;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct window);
} win SEC(".maps");

static __always_inline struct window *get_win(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&win, &zero);
}

static __always_inline bool want_sk(const struct sock *sk)
{
	if (!sk)
		return false;
	__u16 dport = BPF_CORE_READ(sk, __sk_common.skc_dport);
	if (bpf_ntohs(dport) != target_dport)
		return false;
	return !target_netns || BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum) == target_netns;
}

static __always_inline bool is_gso(const struct sk_buff *skb)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	unsigned int end = BPF_CORE_READ(skb, end);
	struct skb_shared_info *sh = (struct skb_shared_info *)(head + end);
	return BPF_CORE_READ(sh, gso_size) != 0;
}

/* Fill the skb-derived fields of e. */
static __always_inline void fill_skb(struct ev *e, const struct sk_buff *skb)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	unsigned char *data = BPF_CORE_READ(skb, data);
	unsigned int end = BPF_CORE_READ(skb, end);
	struct skb_shared_info *sh = (struct skb_shared_info *)(head + end);
	__u16 th_off = BPF_CORE_READ(skb, transport_header);
	__u8 doff = 0;
	__u32 seq = 0;

	e->skb = (__u64)skb;
	e->truesize = BPF_CORE_READ(skb, truesize);
	e->len = BPF_CORE_READ(skb, len);
	e->headlen = e->len - BPF_CORE_READ(skb, data_len);
	e->nr_frags = BPF_CORE_READ(sh, nr_frags);
	e->gso_size = BPF_CORE_READ(sh, gso_size);
	e->gso_segs = BPF_CORE_READ(sh, gso_segs);
	e->end = end;
	e->headroom = data - head;
	bpf_probe_read_kernel(&seq, 4, head + th_off + 4);
	bpf_probe_read_kernel(&doff, 1, head + th_off + 12);
	e->seq = bpf_ntohl(seq);
	e->thlen = (doff >> 4) * 4;
	/* bytes in front of the TCP payload that are counted in skb->len */
	unsigned int before = (unsigned int)th_off + e->thlen - e->headroom;
	e->payload = e->len > before ? e->len - before : 0;
}

static __always_inline struct ev *new_ev(unsigned int kind)
{
	struct ev *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u64 *n = bpf_map_lookup_elem(&lost, &kind);
		if (n)
			(*n)++;
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->cpu = bpf_get_smp_processor_id();
	e->ts = bpf_ktime_get_ns();
	e->stackid = -1;
	return e;
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(on_queue, struct sk_buff *skb)
{
	struct sock *sk = BPF_CORE_READ(skb, sk);
	struct ev *e;

	if (!want_sk(sk))
		return 0;
	e = new_ev(EV_QUEUE);
	if (!e)
		return 0;
	fill_skb(e, skb);
	e->wmem = BPF_CORE_READ(sk, sk_wmem_alloc.refs.counter);
	if (!e->payload) {
		bpf_ringbuf_discard(e, 0);
		return 0;
	}
	bpf_ringbuf_submit(e, 0);
	/* tbf segments oversized GSO skbs at enqueue (tbf_segment): open a window */
	if (is_gso(skb)) {
		struct window *w = get_win();
		if (w) {
			w->skb = (__u64)skb;
			w->sk = (__u64)sk;
		}
	}
	return 0;
}

SEC("tp_btf/qdisc_dequeue")
int BPF_PROG(on_dequeue, struct Qdisc *q, const struct netdev_queue *txq, int packets,
	     struct sk_buff *skb)
{
	struct sock *sk;
	struct ev *e;

	if (!skb)
		return 0;
	sk = BPF_CORE_READ(skb, sk);
	if (!want_sk(sk) || !is_gso(skb))
		return 0;
	e = new_ev(EV_DEQ);
	if (!e)
		return 0;
	fill_skb(e, skb);
	e->wmem = BPF_CORE_READ(sk, sk_wmem_alloc.refs.counter);
	bpf_ringbuf_submit(e, 0);
	struct window *w = get_win();
	if (w) {
		w->skb = (__u64)skb;
		w->sk = (__u64)sk;
	}
	return 0;
}

SEC("tp_btf/consume_skb")
int BPF_PROG(on_consume, struct sk_buff *skb, void *location)
{
	struct window *w = get_win();
	struct ev *e;

	if (!w || !w->skb || w->skb != (__u64)skb)
		return 0;
	e = new_ev(EV_GSOFREE);
	if (e) {
		fill_skb(e, skb);
		struct sock *wsk = (struct sock *)w->sk;
		e->wmem = BPF_CORE_READ(wsk, sk_wmem_alloc.refs.counter);
		e->stackid = bpf_get_stackid(ctx, &stacks, 0);
		bpf_ringbuf_submit(e, 0);
	}
	w->skb = 0;
	w->sk = 0;
	return 0;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(on_xmit, const struct sk_buff *skb, const struct net_device *dev)
{
	struct sock *sk = BPF_CORE_READ(skb, sk);
	struct window *w = get_win();
	struct ev *e;

	if (w)
		w->skb = 0;
	if (!want_sk(sk))
		return 0;
	e = new_ev(EV_XMIT);
	if (!e)
		return 0;
	fill_skb(e, skb);
	e->wmem = BPF_CORE_READ(sk, sk_wmem_alloc.refs.counter);
	if (!e->payload) {
		bpf_ringbuf_discard(e, 0);
		return 0;
	}
	e->stackid = bpf_get_stackid(ctx, &stacks, 0);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/kmalloc")
int BPF_PROG(on_kmalloc, unsigned long call_site, const void *ptr, size_t bytes_req,
	     size_t bytes_alloc, gfp_t gfp, int node)
{
	struct window *w = get_win();
	struct ev *e;

	if (!w || !w->skb)
		return 0;
	e = new_ev(EV_KMALLOC);
	if (!e)
		return 0;
	e->skb = w->skb;
	e->a = bytes_req;
	e->b = bytes_alloc;
	e->stackid = bpf_get_stackid(ctx, &stacks, 0);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(on_kcache, unsigned long call_site, const void *ptr, struct kmem_cache *s,
	     gfp_t gfp, int node)
{
	struct window *w = get_win();
	struct ev *e;

	if (!w || !w->skb)
		return 0;
	e = new_ev(EV_KCACHE);
	if (!e)
		return 0;
	e->skb = w->skb;
	e->a = BPF_CORE_READ(s, object_size);
	e->b = BPF_CORE_READ(s, size);
	const char *name = BPF_CORE_READ(s, name);
	bpf_probe_read_kernel_str(e->name, sizeof(e->name), name);
	e->stackid = bpf_get_stackid(ctx, &stacks, 0);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
