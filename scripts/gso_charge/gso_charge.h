/* Shared between gso_charge.bpf.c and gso_charge.c. */
#ifndef GSO_CHARGE_H
#define GSO_CHARGE_H

enum ev_kind {
	EV_QUEUE = 1,   /* net_dev_queue: skb as TCP handed it to the device (before the qdisc) */
	EV_DEQ = 2,     /* qdisc_dequeue: a GSO skb leaves the qdisc (segmentation follows) */
	EV_GSOFREE = 3, /* consume_skb of a GSO skb right after it was segmented */
	EV_XMIT = 4,    /* net_dev_start_xmit: each frame handed to the driver */
	EV_KMALLOC = 5, /* kmalloc inside a segmentation window */
	EV_KCACHE = 6,  /* kmem_cache_alloc inside a segmentation window */
};

struct ev {
	unsigned int kind;
	unsigned int cpu;
	unsigned long long ts;
	unsigned long long skb;
	unsigned int truesize;
	unsigned int len;       /* skb->len (L2 header included from net_dev_queue on) */
	unsigned int headlen;   /* linear bytes */
	unsigned int payload;   /* TCP payload bytes */
	unsigned int nr_frags;
	unsigned int gso_size;
	unsigned int gso_segs;
	unsigned int end;       /* skb_end_offset = usable head size */
	unsigned int headroom;
	unsigned int seq;       /* TCP sequence number (host order) */
	unsigned int thlen;
	int wmem;               /* sk->sk_wmem_alloc at the event */
	int stackid;
	unsigned int a;         /* kmalloc: bytes_req; kmem_cache: object_size */
	unsigned int b;         /* kmalloc: bytes_alloc; kmem_cache: size */
	char name[24];          /* kmem_cache name */
};

#endif
