// SPDX-License-Identifier: GPL-2.0
/* Loader for gso_charge.bpf.c.
 * usage: gso_charge -p DPORT [-n NETNS_INODE] -o PREFIX [-t SECONDS] [-k KINDS]
 * Writes PREFIX.csv (one line per event) and PREFIX.stacks.txt (segmentation
 * call stacks with counts).  Touches PREFIX.ready once the probes are attached.
 * Stops on SIGINT/SIGTERM or after SECONDS (default 60).
 * -k KINDS: a comma-separated list of the event kinds to record (queue, deq, gsofree, xmit,
 * kmalloc, kcache; default all); the other programs are not loaded.  The slab programs record
 * every allocation on a CPU while a GSO skb waits for its segmentation, with a call stack
 * each, which costs the traffic they observe; a check that needs none of their events leaves
 * them out.
 */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "gso_charge.h"
#include "gso_charge.skel.h"

static volatile sig_atomic_t stop;
static int verbose;

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}
static void on_sig(int s) { (void)s; stop = 1; }

static FILE *csv;
#define MAXSTK 8192
static int stk_ids[MAXSTK], stk_kind[MAXSTK], stk_cnt[MAXSTK], nstk;

static void note_stack(int id, int kind)
{
	for (int i = 0; i < nstk; i++)
		if (stk_ids[i] == id && stk_kind[i] == kind) { stk_cnt[i]++; return; }
	if (nstk < MAXSTK) { stk_ids[nstk] = id; stk_kind[nstk] = kind; stk_cnt[nstk++] = 1; }
}

static const char *kind_name[] = { "?", "QUEUE", "DEQ", "GSOFREE", "XMIT", "KMALLOC", "KCACHE" };
#define NKINDS 6
#define USAGE "usage: %s -p DPORT [-n NETNS_INODE] -o PREFIX [-t SECONDS] [-k KINDS]\n"

/* The kinds named in LIST (comma-separated, any case) as bits 1 << kind; 0 for a bad name. */
static unsigned int parse_kinds(const char *list)
{
	unsigned int mask = 0;
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int found = 0;
		for (int k = 1; k <= NKINDS; k++)
			if (!strcasecmp(tok, kind_name[k])) { mask |= 1u << k; found = 1; }
		if (!found) {
			fprintf(stderr, "-k %s: unknown kind %s (expected queue, deq, gsofree, xmit, kmalloc, kcache)\n", list, tok);
			return 0;
		}
	}
	return mask;
}

static int on_event(void *ctx, void *data, size_t sz)
{
	const struct ev *e = data;
	(void)ctx;
	if (sz < sizeof(*e) || e->kind < 1 || e->kind > NKINDS)
		return 0;
	/* kind,ts,cpu,skb,truesize,len,headlen,payload,nr_frags,gso_size,gso_segs,end,
	 * headroom,seq,thlen,wmem,stackid,a,b,name */
	fprintf(csv, "%s,%llu,%u,%llx,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%d,%d,%u,%u,%s\n",
		kind_name[e->kind], e->ts, e->cpu, e->skb, e->truesize, e->len, e->headlen,
		e->payload, e->nr_frags, e->gso_size, e->gso_segs, e->end, e->headroom,
		e->seq, e->thlen, e->wmem, e->stackid, e->a, e->b, e->name);
	if (e->stackid >= 0)
		note_stack(e->stackid, e->kind);
	return 0;
}

struct ksym { unsigned long addr; char name[128]; };
static struct ksym *ksyms;
static size_t nksyms;

static int cmp_ksym(const void *a, const void *b)
{
	unsigned long x = ((const struct ksym *)a)->addr, y = ((const struct ksym *)b)->addr;
	return x < y ? -1 : x > y;
}

static void load_ksyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	size_t cap = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a; char t; char name[128];
		if (sscanf(line, "%lx %c %127s", &a, &t, name) != 3 || !a)
			continue;
		if (nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
		}
		ksyms[nksyms].addr = a;
		snprintf(ksyms[nksyms].name, sizeof(ksyms[nksyms].name), "%s", name);
		nksyms++;
	}
	fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), cmp_ksym);
}

static const struct ksym *find_ksym(unsigned long a)
{
	size_t lo = 0, hi = nksyms;
	if (!nksyms || a < ksyms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (ksyms[mid].addr <= a) lo = mid; else hi = mid;
	}
	return &ksyms[lo];
}

int main(int argc, char **argv)
{
	int port = 0, secs = 60, opt;
	unsigned int kinds = ~0u;
	unsigned long netns = 0;
	const char *prefix = NULL;
	char path[4096];

	while ((opt = getopt(argc, argv, "p:n:o:t:k:v")) != -1) {
		if (opt == 'p') port = atoi(optarg);
		else if (opt == 'n') netns = strtoul(optarg, NULL, 10);
		else if (opt == 'o') prefix = optarg;
		else if (opt == 't') secs = atoi(optarg);
		else if (opt == 'k') { if (!(kinds = parse_kinds(optarg))) return 2; }
		else if (opt == 'v') verbose = 1;
		else { fprintf(stderr, USAGE, argv[0]); return 2; }
	}
	if (!port || !prefix) {
		fprintf(stderr, USAGE, argv[0]);
		return 2;
	}

	libbpf_set_print(print_fn);
	struct gso_charge_bpf *skel = gso_charge_bpf__open();
	if (!skel) { fprintf(stderr, "open failed\n"); return 1; }
	skel->rodata->target_dport = (unsigned short)port;
	skel->rodata->target_netns = (__u32)netns;
	{
		/* in the order of kind_name */
		struct bpf_program *progs[NKINDS + 1] = { NULL, skel->progs.on_queue,
			skel->progs.on_dequeue, skel->progs.on_consume, skel->progs.on_xmit,
			skel->progs.on_kmalloc, skel->progs.on_kcache };
		for (int k = 1; k <= NKINDS; k++)
			bpf_program__set_autoload(progs[k], (kinds >> k) & 1);
	}
	if (gso_charge_bpf__load(skel)) { fprintf(stderr, "load failed\n"); return 1; }
	if (gso_charge_bpf__attach(skel)) { fprintf(stderr, "attach failed\n"); return 1; }

	snprintf(path, sizeof(path), "%s.csv", prefix);
	csv = fopen(path, "w");
	if (!csv) { perror(path); return 1; }
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
	if (!rb) { fprintf(stderr, "ring buffer failed\n"); return 1; }

	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	snprintf(path, sizeof(path), "%s.ready", prefix);
	FILE *r = fopen(path, "w");
	if (r) fclose(r);

	time_t t0 = time(NULL);
	while (!stop && time(NULL) - t0 < secs) {
		int err = ring_buffer__poll(rb, 100);
		if (err < 0 && err != -EINTR) { fprintf(stderr, "poll: %d\n", err); break; }
	}
	ring_buffer__consume(rb);
	fclose(csv);

	/* events the BPF side could not report: failed ring buffer reservations and runs
	 * skipped by the kernel's BPF recursion protection */
	{
		int ncpu = libbpf_num_possible_cpus();
		unsigned long long *vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));
		for (unsigned int k = 1; vals && k <= NKINDS; k++) {
			unsigned long long tot = 0;
			if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.lost), &k, vals) == 0)
				for (int c = 0; c < ncpu; c++)
					tot += vals[c];
			if (tot)
				fprintf(stderr, "lost %s events: %llu\n", kind_name[k], tot);
		}
		free(vals);
		struct bpf_program *prog;
		bpf_object__for_each_program(prog, skel->obj) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);
			memset(&info, 0, sizeof(info));
			if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0 &&
			    info.recursion_misses)
				fprintf(stderr, "%s: %llu runs skipped (recursion)\n",
					bpf_program__name(prog),
					(unsigned long long)info.recursion_misses);
		}
	}
	load_ksyms();
	snprintf(path, sizeof(path), "%s.stacks.txt", prefix);
	FILE *sf = fopen(path, "w");
	if (sf) {
		int fd = bpf_map__fd(skel->maps.stacks);
		for (int i = 0; i < nstk; i++) {
			unsigned long ips[64] = {0};
			fprintf(sf, "stack %d kind %s: %d events\n", stk_ids[i], kind_name[stk_kind[i]], stk_cnt[i]);
			if (bpf_map_lookup_elem(fd, &stk_ids[i], ips))
				continue;
			for (int j = 0; j < 64 && ips[j]; j++) {
				const struct ksym *k = find_ksym(ips[j]);
				if (k) fprintf(sf, "    %s+0x%lx\n", k->name, ips[j] - k->addr);
				else fprintf(sf, "    0x%lx\n", ips[j]);
			}
		}
		fclose(sf);
	}
	ring_buffer__free(rb);
	gso_charge_bpf__destroy(skel);
	return 0;
}
