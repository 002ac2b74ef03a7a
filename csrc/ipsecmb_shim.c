/* macbench shim over Intel ipsec-mb (libIPSec_MB, 1.x): keyed MACs through the job API.
 *
 * One object = one IMB_MGR (its own job queue, so objects never share lanes) plus the key material
 * the jobs point at, prepared once in imb_shim_new:
 *   HMAC-MD5/SHA1/224/256/384/512: the key (hashed first when longer than a block) xor ipad/opad,
 *     each block run through the one-block compression (IMB_SHAx_ONE_BLOCK, IMB_MD5_ONE_BLOCK): the
 *     inner and outer starting states the job takes (the header's documented HMAC key preparation).
 *     ipsec-mb has no whole MD5 hash, so for HMAC-MD5 the caller shortens a long key itself and hands
 *     over the empty message's tag (imb_shim_set_empty_tag; see hmac_empty).
 *   CMAC-AES128/256: the AES key schedule (IMB_AES_KEYEXP_128/256) and subkeys K1/K2
 *     (IMB_AES_CMAC_SUBKEY_GEN_128/256).
 *   XCBC-AES128-96: K1's schedule and K2, K3 (IMB_AES_XCBC_KEYEXP); 1.3 writes only the 12-byte tag.
 *   GMAC-AES128/192/256: the AES schedule and GHASH key table (IMB_AES128/192/256_GCM_PRE).
 *   Poly1305: the 32-byte key itself, which the job reads per message (the one-time key reused).
 *   The 3GPP integrity functions (their own block below, fill_3gpp_job and uia1_tag):
 *     128-EIA2: CMAC's schedule and subkeys, as CMAC-AES128, for IMB_AUTH_AES_CMAC_BITLEN;
 *     128-EIA3: the ZUC key itself (IMB_AUTH_ZUC_EIA3_BITLEN reads it per job);
 *     UIA2: the SNOW 3G key schedule (IMB_SNOW3G_INIT_KEY_SCHED);
 *     UIA1: the KASUMI f9 key schedules (IMB_KASUMI_INIT_F9_KEY_SCHED).
 * Per message a job is filled in (pointers and lengths only) and submitted; imb_shim_tag flushes at
 * once (one message), imb_shim_tag_batch submits up to MAX_BATCH jobs before flushing, so the manager
 * can run them side by side in its SIMD lanes. Jobs may complete out of order; each carries its index
 * in user_data and writes its full tag into the caller's slot (or, for a truncated tag, a per-index
 * scratch slot copied out at the end). The library's job check runs once per job shape a context sees
 * (tag_jobs); later jobs of an accepted shape are submitted unchecked, as ipsec_perf submits them.
 *
 * The manager's code path: `level` 0 is the library's own choice (init_mb_mgr_auto, macbench's `hw`);
 * IMB_ARCH_SSE … IMB_ARCH_AVX512 ask for that path (init_mb_mgr_sse/avx/avx2/avx512, the ISA levels).
 * A level is initialised only when the features the library detected (mgr->features after
 * alloc_mb_mgr) hold all its IMB_CPUFLAGS_* bits, the check the library's own init_mb_mgr_auto makes,
 * so an unsupported path is never entered; the path the manager then reports (mgr->used_arch) goes
 * back to the caller, which refuses a manager on any other path.
 */
#define _POSIX_C_SOURCE 200112L
#include <intel-ipsec-mb.h>
#include <pthread.h>
#include <stdint.h>
#include "macbench_shim.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMB_SHIM_MAX_BATCH 16
#define IMB_SHIM_MAX_TAG 64
/* Job shapes remembered as accepted by the library's job check, per context (see shape_checked). */
#define IMB_SHIM_CHECKED_SHAPES 8

enum {
    IMB_SHIM_ERR_UNKNOWN_ALGORITHM = -1,
    IMB_SHIM_ERR_NO_MEMORY = -2,
    IMB_SHIM_ERR_TAG_LENGTH = -3,
    IMB_SHIM_ERR_NONCE_LENGTH = -4,
    IMB_SHIM_ERR_KEY_LENGTH = -5,
    IMB_SHIM_ERR_JOB = -6,
    IMB_SHIM_ERR_BATCH = -7,
    IMB_SHIM_ERR_LEVEL = -8,  /* the CPU lacks the level's flags, or the level is unknown */
    IMB_SHIM_ERR_INIT = -9,   /* init_mb_mgr_* set imb_errno */
    IMB_SHIM_ERR_EMPTY = -10, /* HMAC-MD5 of the empty message without the caller's tag */
    IMB_SHIM_ERR_LENGTH = -11, /* a message length the function does not take */
    IMB_SHIM_ERR_NO_STREAMING = -12, /* the job API is one-shot: no message in pieces */
};

enum kind {
    KIND_HMAC,
    KIND_CMAC,
    KIND_XCBC,
    KIND_GMAC,
    KIND_POLY1305,
    KIND_EIA2,
    KIND_EIA3,
    KIND_UIA2,
    KIND_UIA1
};

/* Per-lane state of the 3GPP functions, allocated only for them: what a job points at must live
 * until the job comes back, and up to IMB_SHIM_MAX_BATCH jobs are in flight.
 *   iv: the 16-byte IV 128-EIA3 and UIA2 jobs take, built from the message's nonce
 *       (zuc_eia3_iv_gen, snow3g_f9_iv_gen);
 *   frame: 128-EIA2's CMAC input, the 8-byte COUNT|BEARER|DIRECTION|0^26 header followed by a copy
 *       of the message. IMB_AUTH_AES_CMAC_BITLEN authenticates one contiguous buffer, so that copy is
 *       part of what 128-EIA2 costs through the job API. A lane's frame grows to the largest message
 *       it has seen (realloc, once per new maximum) and is then reused. */
typedef struct {
    uint8_t iv[IMB_SHIM_MAX_BATCH][16] __attribute__((aligned(16)));
    uint8_t *frame[IMB_SHIM_MAX_BATCH];
    size_t frame_cap[IMB_SHIM_MAX_BATCH];
} gpp_lanes;

typedef struct {
    /* First: the job API wants the key material 16-byte aligned; the object is allocated 64-aligned. */
    union {
        struct {
            uint8_t ipad[64];
            uint8_t opad[64];
            /* The padded key xor ipad/opad blocks themselves, kept only for the empty message. */
            uint8_t ipad_block[128];
            uint8_t opad_block[128];
            size_t block; /* the hash's block: 64 or 128 bytes */
            /* HMAC-MD5 only: the empty message's tag, from the caller (no whole MD5 here). */
            uint8_t empty_tag[16];
            int has_empty_tag;
        } hmac;
        struct {
            uint32_t enc[4 * 15];
            uint32_t dec[4 * 15];
            uint8_t k1[16];
            uint8_t k2[16];
        } cmac;
        struct {
            uint32_t k1[4 * 11];
            uint8_t k2[16];
            uint8_t k3[16];
        } xcbc;
        struct gcm_key_data gmac;
        uint8_t poly1305[32];
        uint8_t zuc[16];
        snow3g_key_schedule_t snow3g;
        kasumi_key_sched_t kasumi;
    } key __attribute__((aligned(64)));
    uint8_t scratch[IMB_SHIM_MAX_BATCH][IMB_SHIM_MAX_TAG] __attribute__((aligned(16)));
    IMB_MGR *mgr;
    enum kind kind;
    IMB_HASH_ALG hash;
    size_t full_len; /* the construction's whole tag, what each job writes */
    int last_error;  /* imb_errno / job status of the last failure, for imb_shim_strerror */
    int job_errno;   /* imb_errno right after the submit that queued a refused job (its job check) */
    gpp_lanes *gpp;  /* the 3GPP functions only; NULL otherwise */
    /* The job shapes IMB_SUBMIT_JOB's check accepted on this context (shape_checked): a job of one of
     * them goes through IMB_SUBMIT_JOB_NOCHECK. */
    struct {
        uint64_t len; /* msg_len_to_hash_in_bytes, or in bits for the bit-length functions */
        size_t nonce_len;
    } checked[IMB_SHIM_CHECKED_SHAPES];
    size_t checked_count; /* entries of checked[] in use */
    size_t checked_next;  /* the entry the next accepted shape replaces once all are in use */
    /* IMB_FLUSH_JOB calls that handed a job back, since the context was made (imb_shim_flushes). */
    uint64_t flushes;
} imb_shim_mac;

/* The CPU flags (IMB_CPUFLAGS_*) a level's init_mb_mgr_* needs; 0 for an unknown level. */
static uint64_t level_flags(int level) {
    switch (level) {
    case IMB_ARCH_SSE: return IMB_CPUFLAGS_SSE;
    case IMB_ARCH_AVX: return IMB_CPUFLAGS_AVX;
    case IMB_ARCH_AVX2: return IMB_CPUFLAGS_AVX2;
    case IMB_ARCH_AVX512: return IMB_CPUFLAGS_AVX512;
    default: return 0;
    }
}

/* A manager on the path `level` asks for (0: the library's choice). On failure NULL, *err one of the
 * IMB_SHIM_ERR_* codes and, for IMB_SHIM_ERR_INIT, *detail the imb_errno init_mb_mgr_* left. */
/* Managers are made one at a time: init_mb_mgr_* runs the library's power-up self-test, whose
 * jobs report through imb_errno, and until the manager has an error of its own imb_get_errno reads
 * the library's one global imb_errno (1.3 writes it from every thread: intel-ipsec-mb issue 112).
 * Two sessions keying at once could read each other's status. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* Initialise `mgr` for `level` (0: the library's choice). */
static void init_level(IMB_MGR *mgr, int level) {
    switch (level) {
    case 0: init_mb_mgr_auto(mgr, NULL); break;
    case IMB_ARCH_SSE: init_mb_mgr_sse(mgr); break;
    case IMB_ARCH_AVX: init_mb_mgr_avx(mgr); break;
    case IMB_ARCH_AVX2: init_mb_mgr_avx2(mgr); break;
    default: init_mb_mgr_avx512(mgr); break;
    }
}

/* How many times a manager whose self-test failed is initialised again before the failure is
 * believed: a status another thread left in the global imb_errno (a job refused elsewhere) fails
 * one run of the self-test's known answers, not three; a faulty library or CPU fails every run. */
#define SELF_TEST_TRIES 3

static IMB_MGR *new_mgr(int level, int *err, int *detail) {
    IMB_MGR *mgr = alloc_mb_mgr(0);
    uint64_t needed = level_flags(level);
    *err = 0;
    *detail = 0;
    if (mgr == NULL) {
        *err = IMB_SHIM_ERR_NO_MEMORY;
        return NULL;
    }
    if (level != 0 && (needed == 0 || (mgr->features & needed) != needed)) {
        free_mb_mgr(mgr);
        *err = IMB_SHIM_ERR_LEVEL;
        return NULL;
    }
    pthread_mutex_lock(&init_lock);
    for (int tries = 0; tries < SELF_TEST_TRIES; tries++) {
        init_level(mgr, level);
        if (imb_get_errno(mgr) != IMB_ERR_SELFTEST) {
            break;
        }
    }
    pthread_mutex_unlock(&init_lock);
    if (imb_get_errno(mgr) != 0) {
        *err = IMB_SHIM_ERR_INIT;
        *detail = imb_get_errno(mgr);
        free_mb_mgr(mgr);
        return NULL;
    }
    return mgr;
}

/* The hash's state after one block from its initial value: an HMAC job's ipad/opad starting state. */
static void one_block(imb_shim_mac *m, const uint8_t *block, uint8_t *state) {
    switch (m->hash) {
    case IMB_AUTH_MD5: IMB_MD5_ONE_BLOCK(m->mgr, block, state); break;
    case IMB_AUTH_HMAC_SHA_1: IMB_SHA1_ONE_BLOCK(m->mgr, block, state); break;
    case IMB_AUTH_HMAC_SHA_224: IMB_SHA224_ONE_BLOCK(m->mgr, block, state); break;
    case IMB_AUTH_HMAC_SHA_256: IMB_SHA256_ONE_BLOCK(m->mgr, block, state); break;
    case IMB_AUTH_HMAC_SHA_384: IMB_SHA384_ONE_BLOCK(m->mgr, block, state); break;
    default: IMB_SHA512_ONE_BLOCK(m->mgr, block, state); break;
    }
}

/* ipad/opad starting states: block = key (hashed if longer than a block) zero-padded, xor 0x36/0x5c. */
static int hmac_prepare(imb_shim_mac *m, const uint8_t *key, size_t key_len, size_t block) {
    uint8_t padded[128];
    uint8_t buf[128];
    size_t i;
    m->key.hmac.block = block;
    memset(padded, 0, sizeof padded);
    if (key_len > block) {
        switch (m->hash) {
        case IMB_AUTH_HMAC_SHA_1: IMB_SHA1(m->mgr, key, key_len, padded); break;
        case IMB_AUTH_HMAC_SHA_224: IMB_SHA224(m->mgr, key, key_len, padded); break;
        case IMB_AUTH_HMAC_SHA_256: IMB_SHA256(m->mgr, key, key_len, padded); break;
        case IMB_AUTH_HMAC_SHA_384: IMB_SHA384(m->mgr, key, key_len, padded); break;
        case IMB_AUTH_HMAC_SHA_512: IMB_SHA512(m->mgr, key, key_len, padded); break;
        /* MD5: no whole hash in ipsec-mb; the caller shortens long keys (RFC 2104 §2) first. */
        default: return IMB_SHIM_ERR_KEY_LENGTH;
        }
    } else if (key_len > 0) {
        memcpy(padded, key, key_len);
    }
    for (i = 0; i < block; i++) {
        buf[i] = padded[i] ^ 0x36;
    }
    memcpy(m->key.hmac.ipad_block, buf, block);
    one_block(m, buf, m->key.hmac.ipad);
    for (i = 0; i < block; i++) {
        buf[i] = padded[i] ^ 0x5c;
    }
    memcpy(m->key.hmac.opad_block, buf, block);
    one_block(m, buf, m->key.hmac.opad);
    memset(padded, 0, sizeof padded);
    memset(buf, 0, sizeof buf);
    return 0;
}

/* The HMACs: registry name, job hash, block size, full tag (= inner digest) length. */
struct hmac_row {
    const char *name;
    IMB_HASH_ALG hash;
    size_t block;
    size_t tag_len;
};

static const struct hmac_row HMACS[] = {
    {"hmac-md5", IMB_AUTH_MD5, 64, 16},
    {"hmac-sha1", IMB_AUTH_HMAC_SHA_1, 64, 20},
    {"hmac-sha224", IMB_AUTH_HMAC_SHA_224, 64, 28},
    {"hmac-sha256", IMB_AUTH_HMAC_SHA_256, 64, 32},
    {"hmac-sha384", IMB_AUTH_HMAC_SHA_384, 128, 48},
    {"hmac-sha512", IMB_AUTH_HMAC_SHA_512, 128, 64},
};

static const struct hmac_row *find_hmac(const char *name) {
    size_t i;
    for (i = 0; i < sizeof HMACS / sizeof HMACS[0]; i++) {
        if (strcmp(HMACS[i].name, name) == 0) {
            return &HMACS[i];
        }
    }
    return NULL;
}


/* ---- 3GPP integrity functions (128-EIA2, 128-EIA3, UIA2, UIA1) ---------------------------------
 * The nonce carries one message's 3GPP parameters (docs/methodology.md §5), big-endian as the
 * specifications write them, and only their defined bits are used:
 *   128-EIA2/EIA3: COUNT (4 bytes) | BEARER (1 byte, low 5 bits) | DIRECTION (1 byte, low bit);
 *   UIA1/UIA2:     COUNT-I (4 bytes) | FRESH (4 bytes) | DIRECTION (1 byte, low bit).
 * Message lengths are in bits (the first `bits` bits of the buffer, most significant bit first). */

#define GPP_ZUC_MAX_BITS 65504u    /* ipsec-mb 1.3 ZUC_MAX_BITLEN */
#define GPP_KASUMI_MAX_BITS 20000u /* ipsec-mb 1.3 KASUMI_MAX_LEN */

static int is_3gpp(enum kind kind) {
    return kind == KIND_EIA2 || kind == KIND_EIA3 || kind == KIND_UIA2 || kind == KIND_UIA1;
}

/* The nonce a kind's jobs read: GMAC's 12-byte IV, the 3GPP parameters (6 bytes for EIA2/EIA3, 9
 * for UIA1/UIA2); 0 for the kinds that take none. */
static size_t required_nonce_len(enum kind kind) {
    switch (kind) {
    case KIND_GMAC: return 12; /* the default; any non-empty IV is taken */
    case KIND_EIA2:
    case KIND_EIA3: return 6;
    case KIND_UIA1:
    case KIND_UIA2: return 9;
    default: return 0;
    }
}

static uint32_t be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* Key setup of the 3GPP functions; IMB_SHIM_ERR_UNKNOWN_ALGORITHM for any other name. */
static int new_3gpp(imb_shim_mac *m, const char *algorithm, const uint8_t *key, size_t key_len) {
    if (strcmp(algorithm, "eia2-aes128") == 0) {
        m->kind = KIND_EIA2;
        m->hash = IMB_AUTH_AES_CMAC_BITLEN;
    } else if (strcmp(algorithm, "eia3-zuc128") == 0) {
        m->kind = KIND_EIA3;
        m->hash = IMB_AUTH_ZUC_EIA3_BITLEN;
    } else if (strcmp(algorithm, "uia2-snow3g") == 0) {
        m->kind = KIND_UIA2;
        m->hash = IMB_AUTH_SNOW3G_UIA2_BITLEN;
    } else if (strcmp(algorithm, "uia1-kasumi") == 0) {
        m->kind = KIND_UIA1;
        m->hash = IMB_AUTH_KASUMI_UIA1;
    } else {
        return IMB_SHIM_ERR_UNKNOWN_ALGORITHM;
    }
    if (key_len != 16) {
        return IMB_SHIM_ERR_KEY_LENGTH;
    }
    m->full_len = 4; /* the 32-bit MAC-I */
    if (posix_memalign((void **)&m->gpp, 64, sizeof *m->gpp) != 0 || m->gpp == NULL) {
        m->gpp = NULL;
        return IMB_SHIM_ERR_NO_MEMORY;
    }
    memset(m->gpp, 0, sizeof *m->gpp);
    switch (m->kind) {
    case KIND_EIA2:
        IMB_AES_KEYEXP_128(m->mgr, key, m->key.cmac.enc, m->key.cmac.dec);
        IMB_AES_CMAC_SUBKEY_GEN_128(m->mgr, m->key.cmac.enc, m->key.cmac.k1, m->key.cmac.k2);
        return 0;
    case KIND_EIA3:
        memcpy(m->key.zuc, key, 16);
        return 0;
    /* The schedules refuse only a NULL pointer, so a failure means the key was not usable. */
    case KIND_UIA2:
        return IMB_SNOW3G_INIT_KEY_SCHED(m->mgr, key, &m->key.snow3g) == 0 ? 0 : IMB_SHIM_ERR_KEY_LENGTH;
    default:
        return IMB_KASUMI_INIT_F9_KEY_SCHED(m->mgr, key, &m->key.kasumi) == 0 ? 0 : IMB_SHIM_ERR_KEY_LENGTH;
    }
}

/* The 3GPP fields of job i (fill_job has set the common ones): EIA2's framed copy, EIA3's and UIA2's
 * IV, the key and the length in bits. */
static int fill_3gpp_job(imb_shim_mac *m, IMB_JOB *job, size_t i, const uint8_t *nonce,
                         const uint8_t *msg, uint64_t bits) {
    gpp_lanes *lanes = m->gpp;
    size_t bytes = (size_t)((bits + 7) / 8);
    switch (m->kind) {
    case KIND_EIA2:
        if (lanes->frame_cap[i] < 8 + bytes) {
            uint8_t *grown = realloc(lanes->frame[i], 8 + bytes);
            if (grown == NULL) {
                return IMB_SHIM_ERR_NO_MEMORY;
            }
            lanes->frame[i] = grown;
            lanes->frame_cap[i] = 8 + bytes;
        }
        /* COUNT | BEARER (5 bits) | DIRECTION (1 bit) | 0^26 (TS 33.401 B.2.3) */
        memcpy(lanes->frame[i], nonce, 4);
        lanes->frame[i][4] = (uint8_t)(((nonce[4] & 0x1f) << 3) | ((nonce[5] & 1) << 2));
        memset(lanes->frame[i] + 5, 0, 3);
        if (bytes > 0) {
            memcpy(lanes->frame[i] + 8, msg, bytes);
        }
        job->src = lanes->frame[i];
        job->msg_len_to_hash_in_bits = 64 + bits;
        job->u.CMAC._key_expanded = m->key.cmac.enc;
        job->u.CMAC._skey1 = m->key.cmac.k1;
        job->u.CMAC._skey2 = m->key.cmac.k2;
        return 0;
    case KIND_EIA3:
        if (zuc_eia3_iv_gen(be32(nonce), nonce[4] & 0x1f, nonce[5] & 1, lanes->iv[i]) != 0) {
            return IMB_SHIM_ERR_NONCE_LENGTH;
        }
        job->msg_len_to_hash_in_bits = bits;
        job->u.ZUC_EIA3._key = m->key.zuc;
        job->u.ZUC_EIA3._iv = lanes->iv[i];
        job->u.ZUC_EIA3._iv23 = NULL;
        return 0;
    case KIND_UIA2:
        if (snow3g_f9_iv_gen(be32(nonce), be32(nonce + 4), nonce[8] & 1, lanes->iv[i]) != 0) {
            return IMB_SHIM_ERR_NONCE_LENGTH;
        }
        job->msg_len_to_hash_in_bits = bits;
        job->u.SNOW3G_UIA2._key = &m->key.snow3g;
        job->u.SNOW3G_UIA2._iv = lanes->iv[i];
        return 0;
    default:
        return IMB_SHIM_ERR_UNKNOWN_ALGORITHM;
    }
}

/* UIA1 without the job API: ipsec-mb 1.3's IMB_AUTH_KASUMI_UIA1 job is the same one-buffer KASUMI
 * f9 (no lanes) over a buffer the caller must first frame at bit level (COUNT-I|FRESH|message|
 * DIRECTION|1|0*); IMB_KASUMI_F9_1_BUFFER_USER does that framing itself from COUNT-I|FRESH, the
 * bit length and DIRECTION, with no copy. Its range is checked here because the call reports a
 * bad length only through imb_errno. */
static int uia1_tag(imb_shim_mac *m, const uint8_t *nonce, const uint8_t *msg, uint64_t bits,
                    uint8_t *out) {
    uint64_t iv;
    if (bits == 0 || bits > GPP_KASUMI_MAX_BITS) {
        return IMB_SHIM_ERR_LENGTH;
    }
    /* COUNT-I|FRESH as the 8 bytes of the first block: the call byte-swaps the integer it is given. */
    memcpy(&iv, nonce, 8);
    IMB_KASUMI_F9_1_BUFFER_USER(m->mgr, &m->key.kasumi, iv, msg, (uint32_t)bits, out, nonce[8] & 1);
    return 0;
}

/* Key an object whose manager runs on `level` (0: the library's choice). *used_arch: the path the
 * manager reports (IMB_ARCH_*), for the caller to check; *detail: imb_errno when init failed. */
static int imb_shim_new(const char *algorithm, int level, const uint8_t *key, size_t key_len, void **out,
                 int *used_arch, int *detail) {
    imb_shim_mac *m = NULL;
    const struct hmac_row *hmac;
    int ret = 0;
    *out = NULL;
    *used_arch = IMB_ARCH_NONE;
    *detail = 0;
    if (posix_memalign((void **)&m, 64, sizeof *m) != 0 || m == NULL) {
        return IMB_SHIM_ERR_NO_MEMORY;
    }
    memset(m, 0, sizeof *m);
    m->mgr = new_mgr(level, &ret, detail);
    if (m->mgr == NULL) {
        free(m);
        return ret;
    }
    *used_arch = (int)m->mgr->used_arch;
    if ((hmac = find_hmac(algorithm)) != NULL) {
        m->kind = KIND_HMAC;
        m->hash = hmac->hash;
        m->full_len = hmac->tag_len;
        ret = hmac_prepare(m, key, key_len, hmac->block);
    } else if (strcmp(algorithm, "cmac-aes128") == 0 || strcmp(algorithm, "cmac-aes256") == 0) {
        int aes256 = strcmp(algorithm, "cmac-aes256") == 0;
        if (key_len != (aes256 ? 32u : 16u)) {
            ret = IMB_SHIM_ERR_KEY_LENGTH;
        } else if (aes256) {
            m->kind = KIND_CMAC;
            m->hash = IMB_AUTH_AES_CMAC_256;
            m->full_len = 16;
            IMB_AES_KEYEXP_256(m->mgr, key, m->key.cmac.enc, m->key.cmac.dec);
            IMB_AES_CMAC_SUBKEY_GEN_256(m->mgr, m->key.cmac.enc, m->key.cmac.k1, m->key.cmac.k2);
        } else {
            m->kind = KIND_CMAC;
            m->hash = IMB_AUTH_AES_CMAC;
            m->full_len = 16;
            IMB_AES_KEYEXP_128(m->mgr, key, m->key.cmac.enc, m->key.cmac.dec);
            IMB_AES_CMAC_SUBKEY_GEN_128(m->mgr, m->key.cmac.enc, m->key.cmac.k1, m->key.cmac.k2);
        }
    } else if (strcmp(algorithm, "xcbc-aes128-96") == 0) {
        if (key_len != 16) {
            ret = IMB_SHIM_ERR_KEY_LENGTH;
        } else {
            m->kind = KIND_XCBC;
            m->hash = IMB_AUTH_AES_XCBC;
            /* ipsec-mb 1.3 rejects any other tag length for XCBC (job status IMB_STATUS_INVALID_ARGS):
             * it implements AES-XCBC-MAC-96, not the 16-byte MAC. */
            m->full_len = 12;
            IMB_AES_XCBC_KEYEXP(m->mgr, key, m->key.xcbc.k1, m->key.xcbc.k2, m->key.xcbc.k3);
        }
    } else if (strncmp(algorithm, "gmac-aes", 8) == 0) {
        m->kind = KIND_GMAC;
        m->full_len = 16;
        if (strcmp(algorithm, "gmac-aes128") == 0 && key_len == 16) {
            m->hash = IMB_AUTH_AES_GMAC_128;
            IMB_AES128_GCM_PRE(m->mgr, key, &m->key.gmac);
        } else if (strcmp(algorithm, "gmac-aes192") == 0 && key_len == 24) {
            m->hash = IMB_AUTH_AES_GMAC_192;
            IMB_AES192_GCM_PRE(m->mgr, key, &m->key.gmac);
        } else if (strcmp(algorithm, "gmac-aes256") == 0 && key_len == 32) {
            m->hash = IMB_AUTH_AES_GMAC_256;
            IMB_AES256_GCM_PRE(m->mgr, key, &m->key.gmac);
        } else {
            ret = strcmp(algorithm, "gmac-aes128") == 0 || strcmp(algorithm, "gmac-aes192") == 0 ||
                          strcmp(algorithm, "gmac-aes256") == 0
                      ? IMB_SHIM_ERR_KEY_LENGTH
                      : IMB_SHIM_ERR_UNKNOWN_ALGORITHM;
        }
    } else if (strcmp(algorithm, "poly1305") == 0) {
        if (key_len != 32) {
            ret = IMB_SHIM_ERR_KEY_LENGTH;
        } else {
            m->kind = KIND_POLY1305;
            m->hash = IMB_AUTH_POLY1305;
            m->full_len = 16;
            memcpy(m->key.poly1305, key, 32);
        }
    } else {
        ret = new_3gpp(m, algorithm, key, key_len);
    }
    if (ret != 0) {
        free(m->gpp);
        free_mb_mgr(m->mgr);
        free(m);
        return ret;
    }
    *out = m;
    return 0;
}

static void imb_shim_free(void *handle) {
    imb_shim_mac *m = handle;
    if (m == NULL) {
        return;
    }
    if (m->gpp != NULL) {
        size_t i;
        for (i = 0; i < IMB_SHIM_MAX_BATCH; i++) {
            free(m->gpp->frame[i]);
        }
        free(m->gpp);
    }
    free_mb_mgr(m->mgr);
    memset(m, 0, sizeof *m);
    free(m);
}

/* Where an empty message's job points: Rust hands over a dangling (non-null, unreadable) pointer for
 * an empty slice, and ipsec-mb's CMAC reads through src even when the length is 0. */
static const uint8_t empty_message[16] __attribute__((aligned(16)));

/* A whole SHA hash of len bytes (the IMB_SHAx calls). */
static void whole_hash(imb_shim_mac *m, const uint8_t *src, size_t len, uint8_t *out) {
    switch (m->hash) {
    case IMB_AUTH_HMAC_SHA_1: IMB_SHA1(m->mgr, src, len, out); break;
    case IMB_AUTH_HMAC_SHA_224: IMB_SHA224(m->mgr, src, len, out); break;
    case IMB_AUTH_HMAC_SHA_256: IMB_SHA256(m->mgr, src, len, out); break;
    case IMB_AUTH_HMAC_SHA_384: IMB_SHA384(m->mgr, src, len, out); break;
    default: IMB_SHA512(m->mgr, src, len, out); break;
    }
}

/* HMAC-MD5's empty-message tag, computed by the caller at key setup (ipsec-mb rejects an empty HMAC
 * job and has no whole MD5 hash to compute it with). Only the empty message ever uses it. */
int imb_shim_set_empty_tag(void *handle, const uint8_t *tag, size_t len) {
    imb_shim_mac *m = handle;
    if (m->hash != IMB_AUTH_MD5 || len != 16) {
        return IMB_SHIM_ERR_TAG_LENGTH;
    }
    memcpy(m->key.hmac.empty_tag, tag, 16);
    m->key.hmac.has_empty_tag = 1;
    return 0;
}

/* HMAC of the empty message: ipsec-mb 1.3 rejects a zero-length HMAC job (IMB_STATUS_INVALID_ARGS),
 * so it is computed with the whole-hash calls over the stored key blocks: four compressions instead
 * of two, for the empty message only. */
static int hmac_empty(imb_shim_mac *m, uint8_t *out) {
    uint8_t buf[128 + 64];
    size_t block = m->key.hmac.block;
    if (m->hash == IMB_AUTH_MD5) {
        /* No whole MD5 hash in ipsec-mb: the tag the caller computed at key setup, or a failure. */
        if (!m->key.hmac.has_empty_tag) {
            return IMB_SHIM_ERR_EMPTY;
        }
        memcpy(out, m->key.hmac.empty_tag, 16);
        return 0;
    }
    memcpy(buf, m->key.hmac.ipad_block, block);
    whole_hash(m, buf, block, buf + block);
    memcpy(buf, m->key.hmac.opad_block, block);
    /* The outer hash reads the inner digest, as long as the tag (SHA-224/384: the truncated state). */
    whole_hash(m, buf, block + m->full_len, out);
    return 0;
}

/* Fill in one job: message index i of the batch, its nonce (GMAC's IV) and message; the job writes
 * the construction's whole tag to out. */
static void fill_job(imb_shim_mac *m, IMB_JOB *job, size_t i, const uint8_t *nonce, size_t nonce_len,
                     const uint8_t *msg, size_t len, uint8_t *out) {
    job->cipher_mode = IMB_CIPHER_NULL;
    job->cipher_direction = IMB_DIR_ENCRYPT;
    job->chain_order = IMB_ORDER_HASH_CIPHER;
    job->hash_alg = m->hash;
    job->src = len == 0 ? empty_message : msg;
    job->dst = NULL;
    job->msg_len_to_cipher_in_bytes = 0;
    job->cipher_start_src_offset_in_bytes = 0;
    job->hash_start_src_offset_in_bytes = 0;
    job->msg_len_to_hash_in_bytes = len;
    job->auth_tag_output = out;
    job->auth_tag_output_len_in_bytes = m->full_len;
    job->user_data = (void *)(uintptr_t)i;
    switch (m->kind) {
    case KIND_HMAC:
        job->u.HMAC._hashed_auth_key_xor_ipad = m->key.hmac.ipad;
        job->u.HMAC._hashed_auth_key_xor_opad = m->key.hmac.opad;
        break;
    case KIND_CMAC:
        job->u.CMAC._key_expanded = m->key.cmac.enc;
        job->u.CMAC._skey1 = m->key.cmac.k1;
        job->u.CMAC._skey2 = m->key.cmac.k2;
        break;
    case KIND_XCBC:
        job->u.XCBC._k1_expanded = m->key.xcbc.k1;
        job->u.XCBC._k2 = m->key.xcbc.k2;
        job->u.XCBC._k3 = m->key.xcbc.k3;
        break;
    case KIND_GMAC:
        job->u.GMAC._key = &m->key.gmac;
        job->u.GMAC._iv = nonce;
        job->u.GMAC.iv_len_in_bytes = nonce_len;
        break;
    case KIND_POLY1305:
        job->u.POLY1305._key = m->key.poly1305;
        break;
    default:
        break; /* the 3GPP functions: fill_3gpp_job */
    }
}

/* Message i's length in bits: given for the 3GPP functions' bit-length vectors, else whole bytes.
 * Asked only on the 3GPP paths, so the other jobs pay nothing for it. */
static uint64_t bits_of(const uint64_t *bits, const size_t *lens, size_t i) {
    return bits != NULL ? bits[i] : (uint64_t)lens[i] * 8;
}

/* A job the manager handed back: one fewer in flight; remember a failure, mark its slot done. */
static void retire(imb_shim_mac *m, IMB_JOB *job, uint32_t *done, size_t *in_flight, int *ret) {
    size_t i = (size_t)(uintptr_t)job->user_data;
    *in_flight -= 1;
    if (job->status != IMB_STATUS_COMPLETED) {
        m->last_error = (int)job->status;
        *ret = IMB_SHIM_ERR_JOB;
        return;
    }
    if (i < IMB_SHIM_MAX_BATCH) {
        *done |= 1u << i;
    }
}

/* Whether the library's job check has accepted a job of this shape on this context. Every other
 * field a job of the context gets is the same for all its jobs (fill_job: the hash, the key material,
 * the tag length, a null cipher; src, the tag output and, for GMAC and the 3GPP functions, the IV
 * point into the caller's buffers or the context and are never NULL), so what the check decides
 * depends on the message length (in bits for the bit-length functions) and the nonce length alone. */
static int shape_checked(const imb_shim_mac *m, uint64_t len, size_t nonce_len) {
    size_t k;
    for (k = 0; k < m->checked_count; k++) {
        if (m->checked[k].len == len && m->checked[k].nonce_len == nonce_len) {
            return 1;
        }
    }
    return 0;
}

/* Remember a shape the check accepted, replacing the oldest once IMB_SHIM_CHECKED_SHAPES are kept. */
static void remember_shape(imb_shim_mac *m, uint64_t len, size_t nonce_len) {
    size_t k = m->checked_count < IMB_SHIM_CHECKED_SHAPES ? m->checked_count++ : m->checked_next;
    m->checked[k].len = len;
    m->checked[k].nonce_len = nonce_len;
    m->checked_next = (k + 1) % IMB_SHIM_CHECKED_SHAPES;
}

/* Tag n messages (n <= 16): msgs[i] of lens[i] bytes, nonce i at nonces + i * nonce_len, tag i at
 * tags + i * tag_len, keeping at most `depth` jobs in the manager: when that many are in flight, one
 * flush forces the oldest out before the next is submitted ("inflight:N"). depth >= n submits every
 * job, then flushes until each is back ("burst:N"). bits: message lengths in bits for the 3GPP
 * functions' bit-length vectors, or NULL for 8 * lens[i].
 *
 * The library's job check (IMB_SUBMIT_JOB) runs on the first job of each shape a context sees
 * (shape_checked); later jobs of a shape it accepted go through IMB_SUBMIT_JOB_NOCHECK ("submit job
 * for processing without validating", the header's faster variant), as ipsec_perf submits in its
 * release build (perf/ipsec_perf.c, do_test). So a
 * length the library refuses is still refused with its own reason, and a timed loop, whose lengths
 * the pre-flight has already sent through here, does not pay for the check on every job (in 1.3,
 * is_job_invalid copies two 48-entry tables onto the stack per call: ~20 cycles a job).
 *
 * When the caller's tag is the construction's whole tag the jobs write it in place; otherwise into
 * the context's scratch slots, copied out truncated at the end. */
static int tag_jobs(imb_shim_mac *m, size_t n, const uint8_t *const *msgs, const size_t *lens,
                    const uint64_t *bits, const uint8_t *nonces, size_t nonce_len, uint8_t *tags,
                    size_t tag_len, size_t depth) {
    uint32_t done = 0;
    uint32_t all;
    size_t in_flight = 0;
    int ret = 0;
    int direct;
    size_t i;
    IMB_JOB *job;
    if (depth == 0) {
        depth = 1;
    }
    m->job_errno = 0;
    if (n > IMB_SHIM_MAX_BATCH) {
        return IMB_SHIM_ERR_BATCH;
    }
    if (tag_len > m->full_len) {
        return IMB_SHIM_ERR_TAG_LENGTH;
    }
    /* GMAC takes any non-empty IV (a 12-byte one directly, others through GHASH: the job's
     * iv_len_in_bytes); the 3GPP functions take exactly their frame. */
    if (m->kind == KIND_GMAC ? nonce_len == 0
                             : (required_nonce_len(m->kind) != 0 &&
                                nonce_len != required_nonce_len(m->kind))) {
        return IMB_SHIM_ERR_NONCE_LENGTH;
    }
    direct = tag_len == m->full_len;
    all = (1u << n) - 1u;
    for (i = 0; i < n; i++) {
        uint8_t *out = direct ? tags + i * tag_len : m->scratch[i];
        uint64_t shape;
        IMB_JOB *mine;
        if (lens[i] == 0 && m->kind == KIND_HMAC) {
            int err = hmac_empty(m, out);
            if (err != 0) {
                return err;
            }
            done |= 1u << i;
            continue;
        }
        if (m->kind == KIND_UIA1) {
            int err = uia1_tag(m, nonces + i * nonce_len, msgs[i], bits_of(bits, lens, i), out);
            if (err != 0) {
                m->last_error = err;
                ret = err;
            } else {
                done |= 1u << i;
            }
            continue;
        }
        mine = IMB_GET_NEXT_JOB(m->mgr);
        fill_job(m, mine, i, nonces + i * nonce_len, nonce_len, msgs[i], lens[i], out);
        if (is_3gpp(m->kind)) {
            int err = fill_3gpp_job(m, mine, i, nonces + i * nonce_len, msgs[i], bits_of(bits, lens, i));
            if (err != 0) {
                /* Not submitted: the manager hands the same job out again next time. */
                m->last_error = err;
                ret = err;
                continue;
            }
            shape = mine->msg_len_to_hash_in_bits;
        } else {
            shape = lens[i];
        }
        if (shape_checked(m, shape, nonce_len)) {
            job = IMB_SUBMIT_JOB_NOCHECK(m->mgr);
        } else {
            job = IMB_SUBMIT_JOB(m->mgr);
            /* The job check sets imb_errno in this call; later calls reset it, so keep the first
             * here. A refused job is marked at once and comes back with that status. */
            if (m->job_errno == 0) {
                m->job_errno = imb_get_errno(m->mgr);
            }
            if (mine->status != IMB_STATUS_INVALID_ARGS) {
                remember_shape(m, shape, nonce_len);
            }
        }
        in_flight += 1;
        while (job != NULL) {
            retire(m, job, &done, &in_flight, &ret);
            job = IMB_GET_COMPLETED_JOB(m->mgr);
        }
        /* At the bound, flush the oldest out. */
        while (in_flight >= depth) {
            job = IMB_FLUSH_JOB(m->mgr);
            if (job == NULL) {
                break;
            }
            m->flushes += 1;
            retire(m, job, &done, &in_flight, &ret);
            while ((job = IMB_GET_COMPLETED_JOB(m->mgr)) != NULL) {
                retire(m, job, &done, &in_flight, &ret);
            }
        }
    }
    while ((job = IMB_FLUSH_JOB(m->mgr)) != NULL) {
        m->flushes += 1;
        retire(m, job, &done, &in_flight, &ret);
        while ((job = IMB_GET_COMPLETED_JOB(m->mgr)) != NULL) {
            retire(m, job, &done, &in_flight, &ret);
        }
    }
    if (ret == 0 && done != all) {
        m->last_error = imb_get_errno(m->mgr);
        ret = IMB_SHIM_ERR_JOB;
    }
    if (ret != 0) {
        if (m->last_error == 0) {
            m->last_error = imb_get_errno(m->mgr);
        }
        return ret;
    }
    if (!direct) {
        for (i = 0; i < n; i++) {
            memcpy(tags + i * tag_len, m->scratch[i], tag_len);
        }
    }
    return 0;
}

/* All n jobs submitted, then flushed: the lanes fill up. */
static int imb_shim_tag_batch(void *handle, size_t n, const uint8_t *const *msgs, const size_t *lens,
                       const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len) {
    return tag_jobs(handle, n, msgs, lens, NULL, nonces, nonce_len, tags, tag_len, IMB_SHIM_MAX_BATCH);
}

/* At most depth jobs in the manager, one submitted as the oldest completes. */
static int imb_shim_tag_inflight(void *handle, size_t n, const uint8_t *const *msgs, const size_t *lens,
                          const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len,
                          size_t depth) {
    return tag_jobs(handle, n, msgs, lens, NULL, nonces, nonce_len, tags, tag_len, depth);
}

/* One message: submit one job and flush it. */
static int imb_shim_tag(void *handle, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
                 uint8_t *tag, size_t tag_len) {
    return imb_shim_tag_batch(handle, 1, &msg, &len, nonce, nonce_len, tag, tag_len);
}

/* One message of `bits` bits (the first bits of msg, most significant first): the 3GPP functions'
 * known answers with lengths that are not whole bytes. Other functions take whole bytes only. */
static int imb_shim_tag_bits(void *handle, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg,
                      uint64_t bits, uint8_t *tag, size_t tag_len) {
    imb_shim_mac *m = handle;
    size_t len = (size_t)((bits + 7) / 8);
    if (!is_3gpp(m->kind) && bits % 8 != 0) {
        return IMB_SHIM_ERR_LENGTH;
    }
    return tag_jobs(m, 1, &msg, &len, &bits, nonce, nonce_len, tag, tag_len, IMB_SHIM_MAX_BATCH);
}

/* The error of the last failed call on this object (imb_errno or job status), described. */
static void imb_shim_strerror(const void *handle, int code, char *out, size_t out_len) {
    const imb_shim_mac *m = handle;
    const char *what = NULL;
    if (out == NULL || out_len == 0) {
        return;
    }
    switch (code) {
    case IMB_SHIM_ERR_UNKNOWN_ALGORITHM: what = "algorithm not implemented by the shim"; break;
    case IMB_SHIM_ERR_NO_MEMORY: what = "alloc_mb_mgr failed (out of memory)"; break;
    case IMB_SHIM_ERR_TAG_LENGTH: what = "tag longer than the construction's"; break;
    case IMB_SHIM_ERR_NONCE_LENGTH: what = "wrong nonce length (GMAC: at least 1 byte; 128-EIA2/EIA3 6, UIA1/UIA2 9)"; break;
    case IMB_SHIM_ERR_LENGTH: what = "message length outside what this function takes"; break;
    case IMB_SHIM_ERR_KEY_LENGTH:
        what = "key length not taken (AES: 16, 24 or 32 bytes as named; Poly1305: 32; the 3GPP "
               "functions: 16; HMAC-MD5: at most 64, longer keys are hashed by the caller)";
        break;
    case IMB_SHIM_ERR_EMPTY: what = "HMAC-MD5 of the empty message needs the tag from key setup"; break;
    case IMB_SHIM_ERR_NO_STREAMING: what = "the job API is one-shot: no message in pieces"; break;
    case IMB_SHIM_ERR_BATCH: what = "more than 16 messages in one batch"; break;
    case IMB_SHIM_ERR_INIT: what = "init_mb_mgr_* left an error (imb_errno)"; break;
    case IMB_SHIM_ERR_LEVEL: what = "this CPU lacks the CPU flags of the requested code path (mgr->features)"; break;
    default: break;
    }
    if (what != NULL) {
        snprintf(out, out_len, "%s", what);
        return;
    }
    if (code == IMB_SHIM_ERR_JOB && m != NULL) {
        /* last_error is the job's IMB_STATUS or imb_errno; job_errno what the job check said. */
        const char *status = m->last_error == IMB_STATUS_INVALID_ARGS ? "IMB_STATUS_INVALID_ARGS"
                             : m->last_error == IMB_STATUS_INTERNAL_ERROR ? "IMB_STATUS_INTERNAL_ERROR"
                             : m->last_error == IMB_STATUS_ERROR ? "IMB_STATUS_ERROR"
                                                                  : "status";
        snprintf(out, out_len, "job not completed (%s %d; imb_errno %d: %s)", status, m->last_error,
                 m->job_errno, imb_get_strerror(m->job_errno != 0 ? m->job_errno : imb_get_errno(m->mgr)));
        return;
    }
    snprintf(out, out_len, "ipsec-mb shim error %d", code);
}

/* The run-time library's version ("1.3.0"). */
static const char *imb_shim_version(void) {
    return imb_get_version_str();
}

/* What the library reports for a level (0: the library's choice): the features it detected on this
 * CPU (mgr->features after alloc_mb_mgr) and, when the manager could be initialised, the path it then
 * runs (mgr->used_arch). Returns 0, or an IMB_SHIM_ERR_* code with *detail the imb_errno of a failed
 * init; *features is set in every case but a failed allocation. */
int imb_shim_probe(int level, uint64_t *features, int *used_arch, int *detail) {
    IMB_MGR *probe = alloc_mb_mgr(0);
    IMB_MGR *mgr;
    int err = 0;
    *features = 0;
    *used_arch = IMB_ARCH_NONE;
    *detail = 0;
    if (probe == NULL) {
        return IMB_SHIM_ERR_NO_MEMORY;
    }
    *features = probe->features;
    free_mb_mgr(probe);
    mgr = new_mgr(level, &err, detail);
    if (mgr == NULL) {
        return err;
    }
    *used_arch = (int)mgr->used_arch;
    free_mb_mgr(mgr);
    return 0;
}

/* The IMB_CPUFLAGS_* mask a level needs, as this header defines it (0 for an unknown level): the
 * tests check macbench's own copy of the masks against it. */
uint64_t imb_shim_level_flags(int level) {
    return level_flags(level);
}

/* The library's text for an imb_errno value. */
const char *imb_shim_errno_string(int errnum) {
    return imb_get_strerror(errnum);
}

/* The path this context's manager runs (mgr->used_arch, IMB_ARCH_*): the Rust side proves it is the
 * level asked for before anything is timed. */
int imb_shim_used_arch(const void *handle) {
    const imb_shim_mac *m = handle;
    return (int)m->mgr->used_arch;
}

/* How many IMB_FLUSH_JOB calls have handed a job back on this context: jobs that were still in the
 * manager's lanes when a call had to return every tag. ipsec_perf's job loop never flushes before its
 * run ends, so `compare` asks this of one call before pairing the two (src/compare.rs). */
uint64_t imb_shim_flushes(const void *handle) {
    const imb_shim_mac *m = handle;
    return m->flushes;
}

/* The table of csrc/macbench_shim.h. Levels are IMB_ARCH_* values (2 sse … 5 avx512), which the Rust
 * side maps from its ISA levels; 0 is init_mb_mgr_auto. */

static int shim_create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                       size_t tag_len, void **out, char *why, size_t why_len) {
    int used_arch = 0, detail = 0;
    int ret = imb_shim_new(algorithm, level, key, key_len, out, &used_arch, &detail);
    if (ret == 0 && tag_len > ((imb_shim_mac *)*out)->full_len) {
        imb_shim_free(*out);
        *out = NULL;
        ret = IMB_SHIM_ERR_TAG_LENGTH;
    }
    if (ret != 0) {
        char what[160];
        imb_shim_strerror(NULL, ret, what, sizeof what);
        if (ret == IMB_SHIM_ERR_INIT) {
            snprintf(why, why_len, "%s: %s (imb_errno %d)", what, imb_get_strerror(detail), detail);
        } else {
            snprintf(why, why_len, "%s", what);
        }
    }
    return ret;
}

static int no_streaming_begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    (void)ctx;
    (void)nonce;
    (void)nonce_len;
    return IMB_SHIM_ERR_NO_STREAMING;
}

static int no_streaming_update(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx;
    (void)data;
    (void)len;
    return IMB_SHIM_ERR_NO_STREAMING;
}

static int no_streaming_finish(void *ctx, uint8_t *tag, size_t tag_len) {
    (void)ctx;
    (void)tag;
    (void)tag_len;
    return IMB_SHIM_ERR_NO_STREAMING;
}

static int never_streams(const void *ctx) {
    (void)ctx;
    return 0;
}

static void shim_describe(char *out, size_t out_len) {
    snprintf(out, out_len, "version=%s\n", imb_shim_version());
}

const macbench_shim macbench_shim_ipsecmb = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "ipsecmb",
    .create = shim_create,
    .destroy = imb_shim_free,
    .tag = imb_shim_tag,
    .begin = no_streaming_begin,
    .update = no_streaming_update,
    .finish = no_streaming_finish,
    .streams = never_streams,
    .reason = imb_shim_strerror,
    .describe = shim_describe,
    .tag_bits = imb_shim_tag_bits,
    .tag_batch = imb_shim_tag_batch,
    .tag_inflight = imb_shim_tag_inflight,
};
