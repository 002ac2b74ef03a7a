/* dpdk_shim.c - macbench's face of DPDK's cryptodev: a look-aside crypto device through its driver.
 *
 * Why through cryptodev: it is how Linux programs drive look-aside accelerators (Intel QAT, AMD CCP,
 * Marvell cnxk, NXP CAAM/DPAA2 SEC, virtio-crypto, and the software devices crypto_aesni_mb,
 * crypto_openssl and crypto_null). A message is an op (a descriptor) on a queue pair; the key lives in
 * a session; the device returns ops when it has done them. What the embedded study measures is the
 * driver-level pattern around that, and this shim is where the patterns are:
 *
 * - `tag` (dispatch single, the study's "n + 1"): build op n, enqueue it, poll until it returns,
 *   then build op n + 1.
 * - `tag_batch` (burst:N): build N ops, enqueue them, poll until all N returned.
 * - `tag_inflight` (inflight:N): keep up to N ops on the queue, build and enqueue one as each returns.
 * - `tag_prebuilt` (all): the ops were built at key setup, before any window: allocated, their
 *   session and mbuf attached, offsets and digest pointers set, as a driver with a descriptor ring
 *   prepares its ring. Per message only the data address, length and IV are patched in (counted as
 *   building); the call enqueues the batch as fast
 *   as the device takes it and polls until the last returns.
 *
 * Each context keeps what the submitting core spent, in TSC cycles, split as the study splits "the
 * CPU the offload still costs": building ops, enqueue calls, dequeue calls (polls included), and
 * counts of ops, polls that returned nothing, and ops built. `counters` reads them.
 *
 * The device, its queue pairs and a session pool are set up once per process (EAL initialised once,
 * with arguments that need no hugepages and no PCI for the software devices); each context claims one
 * queue pair and one session (its key) and gives both back at `destroy`. Messages are not copied: an
 * op's mbuf points at the caller's message (IOVA as VA), and the digest is written into the op's own
 * private area and copied out, so a shorter tag is a prefix of the device's digest.
 */
#define _GNU_SOURCE
#include <rte_config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_crypto.h>
#include <rte_cryptodev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_version.h>

#include "macbench_shim.h"

/* Statuses (negative; `reason` words them). */
#define DPDK_ERR_EAL (-1)
#define DPDK_ERR_ENQUEUE (-2)
#define DPDK_ERR_OP (-3)
#define DPDK_ERR_ALLOC (-4)
#define DPDK_ERR_LENGTH (-5)
#define DPDK_ERR_NONCE (-6)
#define DPDK_ERR_STREAM (-7)
#define DPDK_ERR_STUCK (-8)
#define DPDK_ERR_EMPTY (-9)
#define DPDK_ERR_LCORE (-10)
#define DPDK_ERR_BITS (-11)
#define DPDK_ERR_BITS_RANGE (-12)
#define DPDK_ERR_SESSION (-13)

/* Ops a context may have at once: the most a call takes (MACBENCH_SHIM's max for this shim), and
 * as many again prebuilt. */
#define DPDK_MAX_BATCH 256
/* Descriptors per queue pair unless MACBENCH_DPDK_QUEUE_DEPTH (set by --dpdk-queue-depth, checked
 * there: a power of two from 32 to 32768) says otherwise: enough for a whole batch. A queue shorter
 * than a batch takes it in parts, the dispatch loops enqueueing what it accepts as ops come back. */
#define QP_DESCRIPTORS 2048
/* Polls that return nothing before a call gives up: a device that never answers is refused, not
 * waited for forever (at ~100 ns a poll, tens of seconds). */
#define MAX_EMPTY_POLLS (1u << 28)
/* Longest IV an auth algorithm takes here (the 3GPP functions' 16; ZUC-256's 25 is not offered). */
#define MAX_IV 16
#define DIGEST_ROOM 64
/* Where the IV and the digest live in each op: its private area, after the symmetric op. */
#define IV_OFFSET (sizeof(struct rte_crypto_op) + sizeof(struct rte_crypto_sym_op))
/* After the digest: the op's place in its call's batch (22.11's op has no opaque field). */
#define INDEX_OFFSET (IV_OFFSET + MAX_IV + DIGEST_ROOM)
#define OP_PRIV (MAX_IV + DIGEST_ROOM + sizeof(uint64_t))

/* What `counters` writes, in this order (src/mac/dpdk.rs reads the same order). */
enum { C_OPS, C_BUILT, C_BUILD, C_ENQUEUE, C_DEQUEUE, C_EMPTY_POLLS, C_TICK_HZ, C_COUNT };

static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
/* 0: not tried; 1: device up; -1: failed, `setup_why` says why. */
static int setup_state;
static char setup_why[512];
static char device_name[128];
static char driver_name[64];
static uint8_t dev_id;
static uint16_t queue_pairs;
static uint32_t queue_depth;

/* The descriptors each queue pair is set up with. */
static uint32_t wanted_queue_depth(void) {
    const char *d = getenv("MACBENCH_DPDK_QUEUE_DEPTH");
    unsigned long n = (d && *d) ? strtoul(d, NULL, 10) : 0;
    return (n >= 32 && n <= 32768 && (n & (n - 1)) == 0) ? (uint32_t)n : QP_DESCRIPTORS;
}
static unsigned char qp_used[256];
static struct rte_mempool *session_pool;
static unsigned context_serial;

/* How a function's nonce becomes the op's IV. The 3GPP functions take their 16-byte IV in the form
 * their specifications build from COUNT, BEARER/FRESH and DIRECTION (what Intel ipsec-mb's
 * zuc_eia3_iv_gen and snow3g_f9_iv_gen give, and DPDK's own ZUC and SNOW 3G test vectors use). */
enum iv_form {
    IV_NONE,
    IV_AS_IS, /* GMAC: the nonce is the IV */
    IV_EIA3,  /* nonce COUNT(4) BEARER(1) DIRECTION(1) */
    IV_UIA2,  /* nonce COUNT-I(4) FRESH(4) DIRECTION(1) */
};

typedef struct {
    enum rte_crypto_auth_algorithm algo;
    uint16_t iv_len;    /* the device's IV */
    uint16_t nonce_len; /* the function's nonce */
    enum iv_form form;
    int in_bits; /* the op's data length is in bits (the 3GPP functions), else in bytes */
    /* Their specifications' longest message in bits (0: no limit but the mbuf's): crypto_aesni_mb
     * submits its jobs unchecked, so past it the device would return a tag for a message the
     * algorithm does not define (EIA3: 65,504 bits, ipsec-mb's ZUC_MAX_BITLEN). */
    uint32_t max_bits;
} auth_choice;

static const struct {
    const char *name;
    auth_choice choice;
} auth_table[] = {
    {"hmac-md5", {RTE_CRYPTO_AUTH_MD5_HMAC, 0, 0, IV_NONE, 0, 0}},
    {"hmac-sha1", {RTE_CRYPTO_AUTH_SHA1_HMAC, 0, 0, IV_NONE, 0, 0}},
    {"hmac-sha224", {RTE_CRYPTO_AUTH_SHA224_HMAC, 0, 0, IV_NONE, 0, 0}},
    {"hmac-sha256", {RTE_CRYPTO_AUTH_SHA256_HMAC, 0, 0, IV_NONE, 0, 0}},
    {"hmac-sha384", {RTE_CRYPTO_AUTH_SHA384_HMAC, 0, 0, IV_NONE, 0, 0}},
    {"hmac-sha512", {RTE_CRYPTO_AUTH_SHA512_HMAC, 0, 0, IV_NONE, 0, 0}},
    {"cmac-aes128", {RTE_CRYPTO_AUTH_AES_CMAC, 0, 0, IV_NONE, 0, 0}},
    {"xcbc-aes128-96", {RTE_CRYPTO_AUTH_AES_XCBC_MAC, 0, 0, IV_NONE, 0, 0}},
    {"gmac-aes128", {RTE_CRYPTO_AUTH_AES_GMAC, 12, 12, IV_AS_IS, 0, 0}},
    {"gmac-aes192", {RTE_CRYPTO_AUTH_AES_GMAC, 12, 12, IV_AS_IS, 0, 0}},
    {"gmac-aes256", {RTE_CRYPTO_AUTH_AES_GMAC, 12, 12, IV_AS_IS, 0, 0}},
    {"eia3-zuc128", {RTE_CRYPTO_AUTH_ZUC_EIA3, 16, 6, IV_EIA3, 1, 65504}},
    {"uia2-snow3g", {RTE_CRYPTO_AUTH_SNOW3G_UIA2, 16, 9, IV_UIA2, 1, 0}},
};

static int choose(const char *algorithm, auth_choice *out) {
    for (size_t i = 0; i < sizeof auth_table / sizeof auth_table[0]; i++) {
        if (strcmp(auth_table[i].name, algorithm) == 0) {
            *out = auth_table[i].choice;
            return 0;
        }
    }
    return -1;
}

/* The op's IV from the function's nonce (its length checked by admit). 128-EIA3 (ETSI/SAGE
 * 128-EEA3 & 128-EIA3 Document 1, 4.3): IV0..3 = COUNT, IV4 = BEARER << 3, IV5..7 = 0, IV8 = COUNT0
 * ^ DIRECTION << 7, IV9..11 = COUNT1..3, IV12..15 = IV4..7 with IV14 ^= DIRECTION << 7. UIA2
 * (ETSI/SAGE UEA2 & UIA2 Document 1, 4.4): the 32-bit words COUNT-I, FRESH, DIRECTION << 31 ^
 * COUNT-I, FRESH ^ DIRECTION << 15, big-endian. */
static void write_iv(enum iv_form form, uint8_t *iv, const uint8_t *nonce, size_t nonce_len) {
    switch (form) {
    case IV_NONE:
        return;
    case IV_AS_IS:
        memcpy(iv, nonce, nonce_len);
        return;
    case IV_EIA3: {
        uint8_t dir = (uint8_t)((nonce[5] & 1) << 7);
        memcpy(iv, nonce, 4);
        iv[4] = (uint8_t)((nonce[4] & 0x1f) << 3);
        iv[5] = iv[6] = iv[7] = 0;
        memcpy(iv + 8, iv, 8);
        iv[8] ^= dir;
        iv[14] ^= dir;
        return;
    }
    case IV_UIA2: {
        uint8_t dir = (uint8_t)((nonce[8] & 1) << 7);
        memcpy(iv, nonce, 8);
        memcpy(iv + 8, nonce, 8);
        iv[8] ^= dir;
        iv[14] ^= dir;
        return;
    }
    }
}

/* The device macbench drives: MACBENCH_DPDK_DEVICE (set by --dpdk-device), else crypto_aesni_mb. */
static const char *wanted_device(void) {
    const char *d = getenv("MACBENCH_DPDK_DEVICE");
    return (d && *d) ? d : "crypto_aesni_mb";
}

/* A software device is a vdev (its name starts "crypto_"); anything else is a PCI address. */
static int is_vdev(const char *name) { return strncmp(name, "crypto_", 7) == 0; }

static void fail_setup(const char *fmt, const char *a, const char *b) {
    snprintf(setup_why, sizeof setup_why, fmt, a, b);
    setup_state = -1;
}

/* EAL once per process, then the device: configured with every queue pair it has, each set up
 * with QP_DESCRIPTORS, and started. The calling thread's CPU affinity is put back afterwards (EAL
 * binds its main thread to an lcore; macbench pins its sessions itself). */
static int setup_device(void) {
    if (setup_state != 0)
        return setup_state;
    const char *device = wanted_device();
    snprintf(device_name, sizeof device_name, "%s", device);

    char *argv[64];
    int argc = 0;
    static char args[2048];
    char lcore[32], vdev[160], prefix[64];
    cpu_set_t saved;
    CPU_ZERO(&saved);
    int have_affinity = sched_getaffinity(0, sizeof saved, &saved) == 0;
    int first_cpu = 0;
    for (int c = 0; have_affinity && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &saved)) {
            first_cpu = c;
            break;
        }
    snprintf(lcore, sizeof lcore, "%d", first_cpu);
    snprintf(prefix, sizeof prefix, "--file-prefix=macbench-%d", (int)getpid());
    argv[argc++] = "macbench";
    argv[argc++] = "-l";
    argv[argc++] = lcore;
    argv[argc++] = prefix;
    argv[argc++] = "--no-telemetry";
    argv[argc++] = "--log-level=*:crit"; /* its refusals are ours to say, in one line */
    if (is_vdev(device)) {
        /* A software device needs neither hugepages nor PCI. */
        snprintf(vdev, sizeof vdev, "--vdev=%s", device);
        argv[argc++] = "--no-huge";
        argv[argc++] = "-m";
        argv[argc++] = "256";
        argv[argc++] = "--no-pci";
        /* No shared files (--in-memory is refused beside --no-huge); EAL still makes an empty
         * runtime directory, removed below. */
        argv[argc++] = "--no-shconf";
        argv[argc++] = "--iova-mode=va";
        argv[argc++] = vdev;
    } else {
        snprintf(vdev, sizeof vdev, "--allow=%s", device);
        argv[argc++] = vdev;
        argv[argc++] = "--in-memory";
    }
    /* MACBENCH_DPDK_EAL: more EAL arguments, split at spaces (a real device's options). */
    const char *extra = getenv("MACBENCH_DPDK_EAL");
    if (extra && *extra) {
        snprintf(args, sizeof args, "%s", extra);
        for (char *tok = strtok(args, " \t"); tok && argc < 62; tok = strtok(NULL, " \t"))
            argv[argc++] = tok;
    }
    argv[argc] = NULL;
    /* rte_eal_init keeps pointers into argv: a static copy of the pointer array. */
    static char *kept[64];
    memcpy(kept, argv, sizeof(char *) * (size_t)(argc + 1));
    /* EAL prints its usage text and log lines on standard output and error when it refuses; the
     * refusal's cause is rte_errno, said in one line below, so both are quiet while it starts. */
    fflush(stdout);
    fflush(stderr);
    int out_fd = dup(1), err_fd = dup(2), null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0 && out_fd >= 0 && err_fd >= 0) {
        dup2(null_fd, 1);
        dup2(null_fd, 2);
    }
    int started = rte_eal_init(argc, kept);
    int eal_errno = rte_errno;
    fflush(stdout);
    fflush(stderr);
    if (out_fd >= 0)
        dup2(out_fd, 1), close(out_fd);
    if (err_fd >= 0)
        dup2(err_fd, 2), close(err_fd);
    if (null_fd >= 0)
        close(null_fd);
    if (have_affinity)
        sched_setaffinity(0, sizeof saved, &saved);
    if (started < 0) {
        rmdir(rte_eal_get_runtime_dir());
        char what[300];
        if (eal_errno == ENODEV && is_vdev(device))
            snprintf(what, sizeof what, "no DPDK crypto driver is named %s (software devices: "
                     "crypto_aesni_mb, crypto_openssl, crypto_null; `ls /usr/lib/*/dpdk/pmds-*` "
                     "lists the drivers installed)", device);
        else if (eal_errno == EACCES)
            snprintf(what, sizeof what, "no permission: run as root or give the user the device "
                     "and /var/run/dpdk");
        else if (eal_errno == ENOMEM)
            snprintf(what, sizeof what, "not enough memory (-m in MACBENCH_DPDK_EAL)");
        else
            snprintf(what, sizeof what, "check --dpdk-device %s and MACBENCH_DPDK_EAL", device);
        fail_setup("DPDK's EAL refused to start (%s): %s", rte_strerror(eal_errno), what);
        return -1;
    }
    if (have_affinity)
        sched_setaffinity(0, sizeof saved, &saved);
    /* The per-process runtime directory EAL made is empty without shared config: leave no litter
     * (rmdir refuses a directory that is not empty). */
    rmdir(rte_eal_get_runtime_dir());

    int id = rte_cryptodev_get_dev_id(device);
    if (id < 0) {
        char have[256] = "";
        for (uint8_t d = 0; d < rte_cryptodev_count(); d++) {
            strncat(have, rte_cryptodev_name_get(d), sizeof have - strlen(have) - 2);
            strncat(have, " ", sizeof have - strlen(have) - 1);
        }
        fail_setup("no crypto device %s (DPDK found: %s); software devices: crypto_aesni_mb, "
                   "crypto_openssl, crypto_null",
                   device, *have ? have : "none");
        return -1;
    }
    dev_id = (uint8_t)id;
    struct rte_cryptodev_info info;
    rte_cryptodev_info_get(dev_id, &info);
    snprintf(driver_name, sizeof driver_name, "%s", info.driver_name ? info.driver_name : "?");
    queue_pairs = (uint16_t)RTE_MIN(info.max_nb_queue_pairs, sizeof qp_used);
    int socket = rte_cryptodev_socket_id(dev_id);
    if (socket < 0)
        socket = 0;
    struct rte_cryptodev_config conf = {.socket_id = socket, .nb_queue_pairs = queue_pairs};
    if (rte_cryptodev_configure(dev_id, &conf) < 0) {
        fail_setup("%s: rte_cryptodev_configure refused (%s)", device, rte_strerror(rte_errno));
        return -1;
    }
    unsigned session_size = rte_cryptodev_sym_get_private_session_size(dev_id);
    session_pool = rte_cryptodev_sym_session_pool_create("macbench_sessions", 1024, session_size,
                                                         0, 0, socket);
    if (!session_pool) {
        fail_setup("%s: no session pool (%s)", device, rte_strerror(rte_errno));
        return -1;
    }
    queue_depth = wanted_queue_depth();
    for (uint16_t q = 0; q < queue_pairs; q++) {
        struct rte_cryptodev_qp_conf qp = {.nb_descriptors = queue_depth,
                                           .mp_session = session_pool};
        if (rte_cryptodev_queue_pair_setup(dev_id, q, &qp, socket) < 0) {
            fail_setup("%s: queue pair setup refused (%s)", device, rte_strerror(rte_errno));
            return -1;
        }
    }
    if (rte_cryptodev_start(dev_id) < 0) {
        fail_setup("%s: rte_cryptodev_start refused (%s)", device, rte_strerror(rte_errno));
        return -1;
    }
    setup_state = 1;
    return 1;
}

typedef struct {
    void *session;
    uint16_t qp;
    uint16_t nonce_len;
    enum iv_form form;
    int in_bits;
    uint32_t max_bits;
    /* What a session is made of besides its key (a new key makes a new session). */
    enum rte_crypto_auth_algorithm algo;
    uint16_t iv_len;
    size_t tag_len;
    /* An empty message is refused: crypto_aesni_mb returns a wrong HMAC for one (measured: HMAC-SHA-256
     * of "" with a 16-byte key came back b9ec0ca0…, not RFC 2104's 07eff8b3…), because the Intel
     * ipsec-mb job under it takes no empty HMAC message and the driver does not say so. */
    int refuse_empty;
    struct rte_mempool *ops;
    struct rte_mempool *mbufs;
    uint64_t counters[C_COUNT];
    /* dispatch all's descriptors, built at key setup */
    struct rte_crypto_op *ready[DPDK_MAX_BATCH];
    char why[256];
} dpdk_ctx;

static uint64_t now(void) { return rte_rdtsc(); }

/* DPDK's drivers keep per-lcore state (crypto_aesni_mb's Intel ipsec-mb managers), and a thread EAL
 * did not start has no lcore: two such threads would share one. So each thread that calls into the
 * device registers as an lcore first (a TLS read once registered), and gives its lcore back when it
 * ends (a pthread key's destructor): macbench starts session threads run after run. */
static pthread_key_t lcore_key;
static pthread_once_t lcore_key_once = PTHREAD_ONCE_INIT;

static void unregister_lcore(void *unused) {
    (void)unused;
    rte_thread_unregister();
}

static void make_lcore_key(void) { pthread_key_create(&lcore_key, unregister_lcore); }

static int as_lcore(void) {
    if (rte_lcore_id() != LCORE_ID_ANY)
        return 0;
    pthread_once(&lcore_key_once, make_lcore_key);
    if (rte_thread_register() != 0)
        return -1;
    pthread_setspecific(lcore_key, (void *)1);
    return 0;
}

/* One op over `msg`: an mbuf pointing at the caller's bytes (no copy), the session, offsets, the
 * digest into the op's private area, the IV (GMAC's nonce) beside it. */
/* What differs per message in an op (its address, length and IV), written into `op`: by build for a
 * new op, and for a ready op by dispatch all. */
static void patch(dpdk_ctx *c, struct rte_crypto_op *op, const uint8_t *nonce, const uint8_t *msg,
                  size_t len) {
    /* An empty message still gets a real address (a caller's empty slice may be dangling). */
    static const uint8_t empty[1];
    if (len == 0)
        msg = empty;
    /* The message is the mbuf's whole buffer: IOVA as VA, so its address is its IOVA. */
    struct rte_mbuf *m = op->sym->m_src;
    m->buf_addr = (void *)(uintptr_t)msg;
    m->buf_iova = (rte_iova_t)(uintptr_t)msg;
    m->buf_len = (uint16_t)len; /* admit refuses len > UINT16_MAX first */
    m->data_len = (uint16_t)len;
    m->pkt_len = (uint32_t)len;
    op->sym->auth.data.length = (uint32_t)(c->in_bits ? len * 8 : len);
    op->status = RTE_CRYPTO_OP_STATUS_NOT_PROCESSED;
    if (nonce)
        write_iv(c->form, rte_crypto_op_ctod_offset(op, uint8_t *, IV_OFFSET), nonce, c->nonce_len);
}

static struct rte_crypto_op *build(dpdk_ctx *c, const uint8_t *nonce, const uint8_t *msg, size_t len) {
    struct rte_crypto_op *op = rte_crypto_op_alloc(c->ops, RTE_CRYPTO_OP_TYPE_SYMMETRIC);
    if (!op)
        return NULL;
    struct rte_mbuf *m = rte_pktmbuf_alloc(c->mbufs);
    if (!m) {
        rte_crypto_op_free(op);
        return NULL;
    }
    m->data_off = 0;
    rte_crypto_op_attach_sym_session(op, c->session);
    struct rte_crypto_sym_op *sym = op->sym;
    sym->m_src = m;
    sym->auth.data.offset = 0;
    sym->auth.digest.data = rte_crypto_op_ctod_offset(op, uint8_t *, IV_OFFSET + MAX_IV);
    sym->auth.digest.phys_addr = rte_crypto_op_ctophys_offset(op, IV_OFFSET + MAX_IV);
    patch(c, op, nonce, msg, len);
    c->counters[C_BUILT]++;
    return op;
}

static void set_index(struct rte_crypto_op *op, size_t i) {
    *rte_crypto_op_ctod_offset(op, uint64_t *, INDEX_OFFSET) = (uint64_t)i;
}

static size_t index_of(struct rte_crypto_op *op) {
    return (size_t)*rte_crypto_op_ctod_offset(op, uint64_t *, INDEX_OFFSET);
}

static void release(struct rte_crypto_op *op) {
    rte_pktmbuf_free(op->sym->m_src);
    rte_crypto_op_free(op);
}

/* The digest of a returned op into `tag` (the first tag_len bytes); non-zero if the device failed it. */
static int take(struct rte_crypto_op *op, uint8_t *tag, size_t tag_len) {
    if (op->status != RTE_CRYPTO_OP_STATUS_SUCCESS)
        return DPDK_ERR_OP;
    memcpy(tag, op->sym->auth.digest.data, tag_len);
    return 0;
}

/* One dequeue call for up to `want` ops: each returned op's digest into its tag (the op carries its
 * index in the private area, set_index), the first failed status kept in *status, and the op freed
 * unless `keep` (ready ops). Returns how many came back, or -1 when the device has returned nothing
 * for MAX_EMPTY_POLLS polls in a row. */
static int poll_once(dpdk_ctx *c, size_t want, uint8_t *tags, size_t tag_len, int keep, int *status,
                     uint32_t *empty) {
    struct rte_crypto_op *done[DPDK_MAX_BATCH];
    uint64_t t0 = now();
    uint16_t got = rte_cryptodev_dequeue_burst(dev_id, c->qp, done,
                                               (uint16_t)RTE_MIN(want, (size_t)DPDK_MAX_BATCH));
    c->counters[C_DEQUEUE] += now() - t0;
    if (got == 0) {
        c->counters[C_EMPTY_POLLS]++;
        return ++*empty > MAX_EMPTY_POLLS ? -1 : 0;
    }
    *empty = 0;
    for (uint16_t j = 0; j < got; j++) {
        size_t i = index_of(done[j]);
        int s = take(done[j], tags + i * tag_len, tag_len);
        if (s && !*status)
            *status = s;
        if (!keep)
            release(done[j]);
    }
    return got;
}

/* Enqueue ops[0..n) and poll until all n returned. `keep` leaves the ops allocated (ready ops). */
static int run_ops(dpdk_ctx *c, struct rte_crypto_op **ops, size_t n, uint8_t *tags, size_t tag_len,
                   int keep) {
    size_t sent = 0, back = 0;
    uint32_t empty = 0;
    int status = 0;
    while (back < n) {
        if (sent < n) {
            uint64_t t0 = now();
            uint16_t k = rte_cryptodev_enqueue_burst(dev_id, c->qp, ops + sent, (uint16_t)(n - sent));
            c->counters[C_ENQUEUE] += now() - t0;
            sent += k;
        }
        int got = poll_once(c, sent - back, tags, tag_len, keep, &status, &empty);
        if (got < 0)
            return DPDK_ERR_STUCK;
        back += (size_t)got;
    }
    c->counters[C_OPS] += n;
    return status;
}

/* The 3GPP functions take 1 bit up to their specification's longest message. */
static int bits_admitted(const dpdk_ctx *c, uint64_t bits) {
    return bits >= 1 && (c->max_bits == 0 || bits <= c->max_bits);
}

/* Whether a call of n messages may go to the device: this thread has an lcore, the IV is the
 * algorithm's, n fits one call, and every length fits one mbuf segment (and is not the empty HMAC
 * message crypto_aesni_mb gets wrong). Checked before the first op is built, so a refusal leaves
 * nothing allocated or in flight. */
static int admit(dpdk_ctx *c, size_t n, const size_t *lens, size_t nonce_len) {
    if (as_lcore() != 0)
        return DPDK_ERR_LCORE;
    if (c->nonce_len && nonce_len != c->nonce_len)
        return DPDK_ERR_NONCE;
    if (n > DPDK_MAX_BATCH)
        return DPDK_ERR_LENGTH;
    for (size_t i = 0; i < n; i++) {
        if (lens[i] > UINT16_MAX || (lens[i] == 0 && c->refuse_empty))
            return lens[i] ? DPDK_ERR_LENGTH : DPDK_ERR_EMPTY;
        if (c->in_bits && !bits_admitted(c, (uint64_t)lens[i] * 8))
            return DPDK_ERR_BITS_RANGE;
    }
    return 0;
}

static int batch_of(dpdk_ctx *c, size_t n, const uint8_t *const *msgs, const size_t *lens,
                    const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len) {
    struct rte_crypto_op *ops[DPDK_MAX_BATCH];
    uint64_t t0 = now();
    for (size_t i = 0; i < n; i++) {
        ops[i] = build(c, nonces + i * nonce_len, msgs[i], lens[i]);
        if (!ops[i]) {
            for (size_t j = 0; j < i; j++)
                release(ops[j]);
            return DPDK_ERR_ALLOC;
        }
        set_index(ops[i], i);
    }
    c->counters[C_BUILD] += now() - t0;
    return run_ops(c, ops, n, tags, tag_len, 0);
}

static int dpdk_tag(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
                    uint8_t *tag, size_t tag_len) {
    dpdk_ctx *c = ctx;
    int refused = admit(c, 1, &len, nonce_len);
    if (refused)
        return refused;
    return batch_of(c, 1, &msg, &len, nonce, nonce_len, tag, tag_len);
}

/* A message of `bits` bits (the 3GPP functions' known answers, whose lengths need not be whole
 * bytes): one op whose data length is in bits, over the ceil(bits / 8) bytes that hold them. A
 * function whose op counts bytes takes whole bytes only. */
static int dpdk_tag_bits(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg,
                         uint64_t bits, uint8_t *tag, size_t tag_len) {
    dpdk_ctx *c = ctx;
    size_t len = (size_t)((bits + 7) / 8);
    if (!c->in_bits && bits % 8 == 0)
        return dpdk_tag(ctx, nonce, nonce_len, msg, len, tag, tag_len);
    if (!c->in_bits)
        return DPDK_ERR_BITS;
    if (!bits_admitted(c, bits))
        return DPDK_ERR_BITS_RANGE;
    int refused = admit(c, 1, &len, nonce_len);
    if (refused)
        return refused;
    struct rte_crypto_op *op = build(c, nonce, msg, len);
    if (!op)
        return DPDK_ERR_ALLOC;
    op->sym->auth.data.length = (uint32_t)bits;
    set_index(op, 0);
    return run_ops(c, &op, 1, tag, tag_len, 0);
}

static int dpdk_tag_batch(void *ctx, size_t n, const uint8_t *const *msgs, const size_t *lens,
                          const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len) {
    dpdk_ctx *c = ctx;
    int refused = admit(c, n, lens, nonce_len);
    if (refused)
        return refused;
    return batch_of(c, n, msgs, lens, nonces, nonce_len, tags, tag_len);
}

/* Keep up to `depth` ops on the queue: build and enqueue one as each returns. */
static int dpdk_tag_inflight(void *ctx, size_t n, const uint8_t *const *msgs, const size_t *lens,
                             const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len,
                             size_t depth) {
    dpdk_ctx *c = ctx;
    int refused = admit(c, n, lens, nonce_len);
    if (refused)
        return refused;
    if (depth == 0)
        depth = 1;
    size_t next = 0, back = 0, queued = 0;
    uint32_t empty = 0;
    int status = 0;
    while (back < n) {
        while (next < n && queued < depth) {
            uint64_t t0 = now();
            struct rte_crypto_op *op = build(c, nonces + next * nonce_len, msgs[next], lens[next]);
            c->counters[C_BUILD] += now() - t0;
            if (!op)
                return DPDK_ERR_ALLOC;
            set_index(op, next);
            t0 = now();
            uint16_t k = rte_cryptodev_enqueue_burst(dev_id, c->qp, &op, 1);
            c->counters[C_ENQUEUE] += now() - t0;
            if (k == 0) {
                release(op);
                break;
            }
            next++;
            queued++;
        }
        int got = poll_once(c, queued, tags, tag_len, 0, &status, &empty);
        if (got < 0)
            return DPDK_ERR_STUCK;
        back += (size_t)got;
        queued -= (size_t)got;
    }
    c->counters[C_OPS] += n;
    return status;
}

static int dpdk_tag_prebuilt(void *ctx, size_t n, const uint8_t *const *msgs, const size_t *lens,
                             const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len) {
    dpdk_ctx *c = ctx;
    int refused = admit(c, n, lens, nonce_len);
    if (refused)
        return refused;
    uint64_t t0 = now();
    for (size_t i = 0; i < n; i++) {
        patch(c, c->ready[i], nonces + i * nonce_len, msgs[i], lens[i]);
    }
    c->counters[C_BUILD] += now() - t0;
    return run_ops(c, c->ready, n, tags, tag_len, 1);
}

static void shim_destroy(void *ctx);

static void give_back(int qp) {
    pthread_mutex_lock(&setup_lock);
    qp_used[qp] = 0;
    pthread_mutex_unlock(&setup_lock);
}

/* A session of the context's function under `key`: DPDK copies the key (and the driver derives its
 * schedule) at creation. */
static void *new_session(const dpdk_ctx *c, const uint8_t *key, size_t key_len) {
    struct rte_crypto_sym_xform x;
    memset(&x, 0, sizeof x);
    x.type = RTE_CRYPTO_SYM_XFORM_AUTH;
    x.auth.op = RTE_CRYPTO_AUTH_OP_GENERATE;
    x.auth.algo = c->algo;
    x.auth.key.data = (uint8_t *)(uintptr_t)key;
    x.auth.key.length = (uint16_t)key_len;
    x.auth.digest_length = (uint16_t)c->tag_len;
    x.auth.iv.offset = IV_OFFSET;
    x.auth.iv.length = c->iv_len;
    return rte_cryptodev_sym_session_create(dev_id, &x, session_pool);
}

/* A new key, as a device changes keys: a new session in place of the old, the queue pair and the
 * descriptors kept (dispatch all's ready ops attached to it). On failure the old session stays. */
static int dpdk_rekey(void *ctx, const uint8_t *key, size_t key_len) {
    dpdk_ctx *c = ctx;
    if (as_lcore() != 0)
        return DPDK_ERR_LCORE;
    void *session = new_session(c, key, key_len);
    if (!session)
        return DPDK_ERR_SESSION;
    rte_cryptodev_sym_session_free(dev_id, c->session);
    c->session = session;
    for (size_t i = 0; i < DPDK_MAX_BATCH; i++)
        if (c->ready[i])
            rte_crypto_op_attach_sym_session(c->ready[i], session);
    return 0;
}

static int shim_create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                       size_t tag_len, void **out, char *why, size_t why_len) {
    *out = NULL;
    if (level != 0) {
        snprintf(why, why_len, "%s", MACBENCH_SHIM_NO_LEVELS);
        return -1;
    }
    auth_choice choice;
    if (choose(algorithm, &choice) != 0) {
        snprintf(why, why_len, "no DPDK auth algorithm for %s here", algorithm);
        return -1;
    }
    pthread_mutex_lock(&setup_lock);
    if (setup_device() < 0) {
        snprintf(why, why_len, "%s", setup_why);
        pthread_mutex_unlock(&setup_lock);
        return -1;
    }
    struct rte_cryptodev_sym_capability_idx idx = {.type = RTE_CRYPTO_SYM_XFORM_AUTH,
                                                   .algo.auth = choice.algo};
    const struct rte_cryptodev_symmetric_capability *cap =
        rte_cryptodev_sym_capability_get(dev_id, &idx);
    if (!cap) {
        snprintf(why, why_len, "device %s (driver %s) does not list %s among its capabilities",
                 device_name, driver_name, algorithm);
        pthread_mutex_unlock(&setup_lock);
        return -1;
    }
    if (rte_cryptodev_sym_capability_check_auth(cap, (uint16_t)key_len, (uint16_t)tag_len,
                                                choice.iv_len) != 0) {
        snprintf(why, why_len,
                 "device %s (driver %s) takes %s keys of %u-%u bytes (step %u), digests of %u-%u "
                 "bytes, IVs of %u-%u bytes; asked for a %zu-byte key, %zu-byte digest",
                 device_name, driver_name, algorithm, cap->auth.key_size.min,
                 cap->auth.key_size.max, cap->auth.key_size.increment, cap->auth.digest_size.min,
                 cap->auth.digest_size.max, cap->auth.iv_size.min, cap->auth.iv_size.max, key_len,
                 tag_len);
        pthread_mutex_unlock(&setup_lock);
        return -1;
    }
    int qp = -1;
    for (uint16_t q = 0; q < queue_pairs; q++)
        if (!qp_used[q]) {
            qp = q;
            break;
        }
    if (qp < 0) {
        snprintf(why, why_len,
                 "device %s has %u queue pairs and every one is in use: macbench gives each session "
                 "its own (fewer --sessions, or a device with more queue pairs)",
                 device_name, (unsigned)queue_pairs);
        pthread_mutex_unlock(&setup_lock);
        return -1;
    }
    dpdk_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, why_len, "out of memory");
        pthread_mutex_unlock(&setup_lock);
        return -1;
    }
    unsigned serial = context_serial++;
    /* Claimed now, under the lock: sessions key at once, and two contexts on one queue pair would
     * enqueue and dequeue on it from two threads (crypto_aesni_mb then crashes in ipsec-mb). */
    qp_used[qp] = 1;
    pthread_mutex_unlock(&setup_lock);
    if (as_lcore() != 0) {
        snprintf(why, why_len, "device %s: no lcore left for this thread (rte_thread_register)",
                 device_name);
        give_back(qp);
        free(c);
        return -1;
    }

    c->nonce_len = choice.nonce_len;
    c->form = choice.form;
    c->in_bits = choice.in_bits;
    c->max_bits = choice.max_bits;
    c->refuse_empty = strncmp(algorithm, "hmac-", 5) == 0 && strcmp(driver_name, "crypto_aesni_mb") == 0;
    c->tag_len = tag_len;
    int socket = rte_cryptodev_socket_id(dev_id);
    if (socket < 0)
        socket = 0;
    char name[RTE_MEMPOOL_NAMESIZE];
    /* Per-context pools (no cache: sessions run on threads EAL does not know). The op pool holds a
     * batch in flight, and as many ready ops for dispatch all. */
    snprintf(name, sizeof name, "mbo%u", serial);
    c->ops = rte_crypto_op_pool_create(name, RTE_CRYPTO_OP_TYPE_SYMMETRIC, DPDK_MAX_BATCH * 3, 0,
                                       OP_PRIV, socket);
    snprintf(name, sizeof name, "mbm%u", serial);
    c->mbufs = rte_pktmbuf_pool_create(name, DPDK_MAX_BATCH * 3, 0, 0, 0, socket);
    c->algo = choice.algo;
    c->iv_len = choice.iv_len;
    if (c->ops && c->mbufs)
        c->session = new_session(c, key, key_len);
    if (!c->ops || !c->mbufs || !c->session) {
        snprintf(why, why_len, "device %s: %s (%s)", device_name,
                 !c->ops ? "no op pool" : !c->mbufs ? "no mbuf pool" : "session create refused",
                 rte_strerror(rte_errno));
        rte_mempool_free(c->ops);
        rte_mempool_free(c->mbufs);
        give_back(qp);
        free(c);
        return -1;
    }
    c->qp = (uint16_t)qp;
    /* Dispatch all's ready ops, built now (key setup, outside every window); not counted. */
    for (size_t i = 0; i < DPDK_MAX_BATCH; i++) {
        c->ready[i] = build(c, NULL, NULL, 0);
        if (!c->ready[i]) {
            snprintf(why, why_len, "device %s: no op for dispatch all's ready ring", device_name);
            shim_destroy(c);
            *out = NULL;
            return -1;
        }
        set_index(c->ready[i], i);
    }
    memset(c->counters, 0, sizeof c->counters);
    c->counters[C_TICK_HZ] = rte_get_tsc_hz();
    *out = c;
    return 0;
}

static void shim_destroy(void *ctx) {
    dpdk_ctx *c = ctx;
    if (!c)
        return;
    as_lcore();
    /* Nothing is left on the queue after a call returns, unless a call gave up (stuck): drain what
     * comes back, bounded. */
    struct rte_crypto_op *done[32];
    for (int i = 0; i < 1000; i++) {
        uint16_t got = rte_cryptodev_dequeue_burst(dev_id, c->qp, done, 32);
        if (got == 0)
            break;
    }
    for (size_t i = 0; i < DPDK_MAX_BATCH; i++)
        if (c->ready[i])
            release(c->ready[i]);
    rte_cryptodev_sym_session_free(dev_id, c->session);
    rte_mempool_free(c->ops);
    rte_mempool_free(c->mbufs);
    pthread_mutex_lock(&setup_lock);
    qp_used[c->qp] = 0;
    pthread_mutex_unlock(&setup_lock);
    free(c);
}

static int no_begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    (void)ctx, (void)nonce, (void)nonce_len;
    return DPDK_ERR_STREAM;
}
static int no_update(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx, (void)data, (void)len;
    return DPDK_ERR_STREAM;
}
static int no_finish(void *ctx, uint8_t *tag, size_t tag_len) {
    (void)ctx, (void)tag, (void)tag_len;
    return DPDK_ERR_STREAM;
}
static int never_streams(const void *ctx) {
    (void)ctx;
    return 0;
}

static void shim_reason(const void *ctx, int status, char *out, size_t out_len) {
    (void)ctx;
    const char *why;
    switch (status) {
    case DPDK_ERR_EAL:
        why = setup_why;
        break;
    case DPDK_ERR_ENQUEUE:
        why = "the device took no op";
        break;
    case DPDK_ERR_OP:
        why = "the device returned an op with a failed status";
        break;
    case DPDK_ERR_ALLOC:
        why = "no op or mbuf left in the context's pools";
        break;
    case DPDK_ERR_LENGTH:
        why = "an mbuf holds at most 65,535 bytes (one segment); longer messages are not offered";
        break;
    case DPDK_ERR_NONCE:
        why = "the nonce must be the algorithm's length (GMAC 12 bytes, EIA3 6, UIA2 9)";
        break;
    case DPDK_ERR_BITS:
        why = "a length in bits is for the 3GPP functions; this one takes whole bytes";
        break;
    case DPDK_ERR_SESSION:
        why = "the device refused a session for the new key (rte_cryptodev_sym_session_create)";
        break;
    case DPDK_ERR_BITS_RANGE:
        why = "outside the algorithm's lengths (EIA3: 1 to 65,504 bits; UIA2: 1 bit or more)";
        break;
    case DPDK_ERR_EMPTY:
        why = "crypto_aesni_mb returns a wrong HMAC for an empty message (the Intel ipsec-mb job under "
              "it takes none): refused";
        break;
    case DPDK_ERR_LCORE:
        why = "no lcore left for this thread (rte_thread_register: RTE_MAX_LCORE threads use the "
              "device at once)";
        break;
    case DPDK_ERR_STREAM:
        why = "a cryptodev op is one whole message: no streaming";
        break;
    case DPDK_ERR_STUCK:
        why = "the device returned nothing for 2^28 polls: stuck, refused";
        break;
    default:
        why = "unknown status";
    }
    snprintf(out, out_len, "%s", why);
}

/* Start EAL and the device now (what a keyed context would do first), so that `list` and a run's
 * host facts can name the driver: 0, or non-zero with `why`. */
int macbench_dpdk_start(char *why, size_t why_len) {
    pthread_mutex_lock(&setup_lock);
    int up = setup_device();
    if (up < 0)
        snprintf(why, why_len, "%s", setup_why);
    pthread_mutex_unlock(&setup_lock);
    return up > 0 ? 0 : -1;
}

/* version=DPDK 22.11.11, then the device and, once it started in this process, its driver. Starting
 * EAL costs ~0.15 s and ~30 MB, so describing does not start it: a process that uses no dpdk function
 * never pays. */
static void shim_describe(char *out, size_t out_len) {
    pthread_mutex_lock(&setup_lock);
    int up = setup_state;
    if (up == 0) {
        snprintf(out, out_len, "version=%s\ndevice=%s\nstate=not started in this process\n",
                 rte_version(), wanted_device());
    } else if (up > 0) {
        int k = snprintf(out, out_len,
                         "version=%s\ndevice=%s\ndriver=%s\nqueue_pairs=%u\nqueue_depth=%u\n",
                         rte_version(), device_name, driver_name, (unsigned)queue_pairs,
                         (unsigned)queue_depth);
        /* The key lengths the device lists per function: `key.hmac-md5=1-64` (the registry's key
         * limit; a function the device lacks has no line). */
        for (size_t i = 0; i < sizeof auth_table / sizeof auth_table[0] && k > 0 && (size_t)k < out_len; i++) {
            struct rte_cryptodev_sym_capability_idx idx = {.type = RTE_CRYPTO_SYM_XFORM_AUTH,
                                                           .algo.auth = auth_table[i].choice.algo};
            const struct rte_cryptodev_symmetric_capability *cap =
                rte_cryptodev_sym_capability_get(dev_id, &idx);
            if (cap)
                k += snprintf(out + k, out_len - (size_t)k, "key.%s=%u-%u\n", auth_table[i].name,
                              cap->auth.key_size.min, cap->auth.key_size.max);
        }
    } else
        snprintf(out, out_len, "version=%s\ndevice=%s\nerror=%s\n", rte_version(), device_name,
                 setup_why);
    pthread_mutex_unlock(&setup_lock);
}

static size_t shim_counters(const void *ctx, uint64_t *out, size_t n) {
    const dpdk_ctx *c = ctx;
    size_t k = n < C_COUNT ? n : C_COUNT;
    memcpy(out, c->counters, k * sizeof(uint64_t));
    return k;
}

const macbench_shim macbench_shim_dpdk = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "dpdk",
    .create = shim_create,
    .destroy = shim_destroy,
    .tag = dpdk_tag,
    .tag_bits = dpdk_tag_bits,
    .begin = no_begin,
    .update = no_update,
    .finish = no_finish,
    .streams = never_streams,
    .reason = shim_reason,
    .describe = shim_describe,
    .tag_batch = dpdk_tag_batch,
    .tag_inflight = dpdk_tag_inflight,
    .max_batch = DPDK_MAX_BATCH,
    .tag_prebuilt = dpdk_tag_prebuilt,
    .counters = shim_counters,
    .rekey = dpdk_rekey,
};
