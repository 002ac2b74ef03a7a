/* The job patterns behind `compare --against ipsecmb` (docs/backends.md "Against Intel's own
 * benchmark"), timed alone with the installed Intel ipsec-mb: CMAC-AES128 jobs of one length on the
 * manager init_mb_mgr_auto picks, submitted
 *   stream/nocheck   back to back with IMB_SUBMIT_JOB_NOCHECK, flushed once at the end (ipsec_perf),
 *   stream/check     the same through the checked IMB_SUBMIT_JOB,
 *   burst16/nocheck  16 at a time, each burst drained with IMB_FLUSH_JOB (macbench's burst:16 now),
 *   burst16/check    the same, checked (macbench's burst:16 before the shim checked once per shape),
 *   burst64/nocheck  64 at a time, drained.
 * Each pattern runs 41 times, interleaved, over ~400 KB of jobs; printed: TSC cycles per job, the
 * fastest run / the median run. No tags are checked: this times job handling, not correctness (the
 * shim's tags are checked by tests/ipsecmb.rs).
 *
 *   cc -O2 -o /tmp/ipsecmb-job-patterns tools/ipsecmb-job-patterns.c -lIPSec_MB
 *   taskset -c 1 /tmp/ipsecmb-job-patterns */
#include <intel-ipsec-mb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

static uint32_t enc[4 * 15] __attribute__((aligned(64)));
static uint32_t dec[4 * 15] __attribute__((aligned(64)));
static uint8_t k1[16] __attribute__((aligned(16)));
static uint8_t k2[16] __attribute__((aligned(16)));
static uint8_t tags[64][16] __attribute__((aligned(16)));
static uint8_t message[16384] __attribute__((aligned(64)));

struct pattern {
    const char *name;
    size_t burst; /* 0: one stream, flushed at the end */
    int check;
};

static const struct pattern PATTERNS[] = {
    {"stream/nocheck", 0, 0}, {"stream/check", 0, 1},   {"burst16/nocheck", 16, 0},
    {"burst16/check", 16, 1}, {"burst64/nocheck", 64, 0},
};
#define NPATTERNS (sizeof PATTERNS / sizeof PATTERNS[0])
#define RUNS 41

static void fill(IMB_JOB *job, size_t i, size_t len) {
    job->cipher_mode = IMB_CIPHER_NULL;
    job->cipher_direction = IMB_DIR_ENCRYPT;
    job->chain_order = IMB_ORDER_HASH_CIPHER;
    job->hash_alg = IMB_AUTH_AES_CMAC;
    job->src = message;
    job->dst = NULL;
    job->msg_len_to_cipher_in_bytes = 0;
    job->cipher_start_src_offset_in_bytes = 0;
    job->hash_start_src_offset_in_bytes = 0;
    job->msg_len_to_hash_in_bytes = len;
    job->auth_tag_output = tags[i % 64];
    job->auth_tag_output_len_in_bytes = 16;
    job->user_data = (void *)(uintptr_t)i;
    job->u.CMAC._key_expanded = enc;
    job->u.CMAC._skey1 = k1;
    job->u.CMAC._skey2 = k2;
}

/* TSC cycles per job of `jobs` jobs (a multiple of 64) of `len` bytes in pattern p. */
static double run(IMB_MGR *m, const struct pattern *p, size_t len, size_t jobs) {
    size_t done = 0, i;
    IMB_JOB *job;
    uint64_t t0 = __rdtsc();
    for (i = 0; i < jobs; i++) {
        fill(IMB_GET_NEXT_JOB(m), i, len);
        job = p->check ? IMB_SUBMIT_JOB(m) : IMB_SUBMIT_JOB_NOCHECK(m);
        for (; job != NULL; job = IMB_GET_COMPLETED_JOB(m)) {
            done++;
        }
        if (p->burst != 0 && (i + 1) % p->burst == 0) {
            while ((job = IMB_FLUSH_JOB(m)) != NULL) {
                done++;
            }
        }
    }
    while ((job = IMB_FLUSH_JOB(m)) != NULL) {
        done++;
    }
    t0 = __rdtsc() - t0;
    if (done != jobs) {
        fprintf(stderr, "%s: %zu of %zu jobs came back\n", p->name, done, jobs);
        exit(1);
    }
    return (double)t0 / (double)jobs;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void) {
    static const size_t sizes[] = {64, 1024, 16384};
    static double cycles[NPATTERNS][RUNS];
    const uint8_t key[16] = {1};
    IMB_MGR *m = alloc_mb_mgr(0);
    size_t s, p, r;
    if (m == NULL) {
        return 1;
    }
    init_mb_mgr_auto(m, NULL);
    IMB_AES_KEYEXP_128(m, key, enc, dec);
    IMB_AES_CMAC_SUBKEY_GEN_128(m, enc, k1, k2);
    memset(message, 0x5a, sizeof message);
    printf("Intel ipsec-mb %s, path %d (IMB_ARCH_*)\n", imb_get_version_str(), (int)m->used_arch);
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t jobs = 64 * (400000 / sizes[s] / 64 + 1);
        for (r = 0; r < RUNS; r++) {
            for (p = 0; p < NPATTERNS; p++) {
                cycles[p][r] = run(m, &PATTERNS[p], sizes[s], jobs);
            }
        }
        printf("%5zu B:", sizes[s]);
        for (p = 0; p < NPATTERNS; p++) {
            qsort(cycles[p], RUNS, sizeof(double), by_value);
            printf("  %s %.1f/%.1f", PATTERNS[p].name, cycles[p][0], cycles[p][RUNS / 2]);
        }
        printf("\n");
    }
    free_mb_mgr(m);
    return 0;
}
