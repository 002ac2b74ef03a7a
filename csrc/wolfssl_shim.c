/* wolfssl_shim.c - wolfCrypt's MACs behind macbench's one shim table (csrc/macbench_shim.h).
 *
 * Why wolfSSL: it is the embedded TLS library, the one on the devices of the embedded-systems seed,
 * and its crypto layer, wolfCrypt, offers HMAC (MD5, SHA-1, SHA-2, SHA-3), CMAC-AES, GMAC-AES and
 * Poly1305 as MACs. Every tag is wolfCrypt's code.
 *
 * Key setup once in `create`, per message only what the library's API needs:
 * - HMAC: wc_HmacSetKey once; per message wc_HmacUpdate and wc_HmacFinal. wolfCrypt keeps the padded
 *   key, not the hashed ipad/opad states: it hashes the ipad block again on the first update after a
 *   final and the opad block in every final, so a message costs `Γ + 3` compressions (seed 001, eq.
 *   4.2), not `Γ + 1` as in OpenSSL or Nettle. That is the library's own cost and is kept.
 * - CMAC-AES: wc_InitCmac once (AES key schedule, subkeys K1 and K2) into a keyed template; per
 *   message the template is copied into a work context (wc_CmacFinal leaves its context spent), then
 *   wc_CmacUpdate and wc_CmacFinal. The copy is sound in this build: the Cmac struct holds no pointer
 *   wolfCrypt allocates (heap is NULL; AES-GCM's stream buffer is inline without WOLFSSL_SMALL_STACK,
 *   checked below at compile time).
 * - GMAC-AES: wc_GmacSetKey once (AES key schedule, GHASH table); per message wc_GmacUpdate with the
 *   IV and the message as associated data, one call. GMAC does not stream here: wolfCrypt's AES-GCM
 *   stream API (wc_AesGcmInit) refuses IVs longer than 16 bytes, which wc_GmacUpdate and the GCM
 *   specification take, so `streams` says no and a message in pieces is joined first.
 * - Poly1305: wc_Poly1305SetKey once into a template copied per message (wc_Poly1305Final clears r
 *   and the pad); a plain-data struct.
 *
 * Tags: computed in full and the prefix copied (GCM refuses tags shorter than 12 bytes).
 *
 * Statuses: wolfCrypt's own error codes (negative), which `reason` turns into words with
 * wc_GetErrorString, and the shim's (positive, below).
 *
 * Debian's libwolfssl is built without --enable-intelasm / --enable-aesni: its AES, GHASH and SHA
 * are portable C (the library has no AES-NI, PCLMULQDQ or SHA-NI instruction), so there is no code
 * path to switch; `describe` records the build's facts.
 *
 * Built by build.rs with the `cc` crate only when wolfSSL is found (cfg `have_wolfssl`).
 */

#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/cmac.h>
#include <wolfssl/wolfcrypt/error-crypt.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/poly1305.h>
#include <wolfssl/wolfcrypt/wc_port.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macbench_shim.h"

#if defined(WOLFSSL_SMALL_STACK) && defined(WOLFSSL_AESGCM_STREAM) && !defined(WOLFSSL_AESNI)
#error "this wolfSSL build allocates AES-GCM's stream buffer: a keyed Cmac cannot be copied"
#endif
#if !defined(WOLFSSL_CMAC) || !defined(HAVE_AESGCM) || !defined(HAVE_POLY1305)
#error "wolfSSL without CMAC, AES-GCM or Poly1305"
#endif

/* The shim's own statuses; wolfCrypt's are negative. */
#define WOLF_SHIM_UNKNOWN_ALGORITHM 1
#define WOLF_SHIM_KEY_LENGTH 2
#define WOLF_SHIM_TAG_LENGTH 3
#define WOLF_SHIM_NONCE 4
#define WOLF_SHIM_NO_MEMORY 5
#define WOLF_SHIM_INIT 6
#define WOLF_SHIM_NO_STREAMING 7

enum family { FAMILY_HMAC, FAMILY_CMAC, FAMILY_GMAC, FAMILY_POLY1305 };

struct row {
    const char *name;
    enum family family;
    /* wolfCrypt's hash type for HMAC; 0 otherwise. */
    int hash;
    /* 0: any key length (HMAC). */
    size_t key_len;
    size_t tag_len;
};

static const struct row ROWS[] = {
    {"hmac-md5", FAMILY_HMAC, WC_MD5, 0, 16},
    {"hmac-sha1", FAMILY_HMAC, WC_SHA, 0, 20},
    {"hmac-sha224", FAMILY_HMAC, WC_SHA224, 0, 28},
    {"hmac-sha256", FAMILY_HMAC, WC_SHA256, 0, 32},
    {"hmac-sha384", FAMILY_HMAC, WC_SHA384, 0, 48},
    {"hmac-sha512", FAMILY_HMAC, WC_SHA512, 0, 64},
    {"hmac-sha3-224", FAMILY_HMAC, WC_SHA3_224, 0, 28},
    {"hmac-sha3-256", FAMILY_HMAC, WC_SHA3_256, 0, 32},
    {"hmac-sha3-384", FAMILY_HMAC, WC_SHA3_384, 0, 48},
    {"hmac-sha3-512", FAMILY_HMAC, WC_SHA3_512, 0, 64},
    {"cmac-aes128", FAMILY_CMAC, 0, 16, 16},
    {"cmac-aes192", FAMILY_CMAC, 0, 24, 16},
    {"cmac-aes256", FAMILY_CMAC, 0, 32, 16},
    {"gmac-aes128", FAMILY_GMAC, 0, 16, 16},
    {"gmac-aes192", FAMILY_GMAC, 0, 24, 16},
    {"gmac-aes256", FAMILY_GMAC, 0, 32, 16},
    {"poly1305", FAMILY_POLY1305, 0, 32, 16},
};

struct keyed {
    const struct row *row;
    union {
        Hmac hmac;
        struct {
            Cmac keyed;
            Cmac work;
        } cmac;
        Gmac gmac;
        struct {
            Poly1305 keyed;
            Poly1305 work;
        } poly;
    } u;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status = -1;

static void init(void) { init_status = wolfCrypt_Init(); }

static int initialised(void) {
    pthread_once(&init_once, init);
    return init_status == 0;
}

static void reason(const void *ctx, int status, char *out, size_t out_len) {
    const char *what;
    (void)ctx;
    if (status < 0) {
        snprintf(out, out_len, "wolfCrypt: %s", wc_GetErrorString(status));
        return;
    }
    switch (status) {
    case 0: what = "ok"; break;
    case WOLF_SHIM_UNKNOWN_ALGORITHM: what = "algorithm not implemented by the shim"; break;
    case WOLF_SHIM_KEY_LENGTH: what = "key length not accepted by wolfCrypt"; break;
    case WOLF_SHIM_TAG_LENGTH: what = "tag length differs from wolfCrypt's"; break;
    case WOLF_SHIM_NONCE: what = "nonce length not accepted for this MAC"; break;
    case WOLF_SHIM_NO_MEMORY: what = "out of memory"; break;
    case WOLF_SHIM_INIT: what = "wolfCrypt_Init failed"; break;
    case WOLF_SHIM_NO_STREAMING: what = "GMAC does not stream in this shim"; break;
    default: what = "unknown shim status"; break;
    }
    snprintf(out, out_len, "%s", what);
}

static int key_context(struct keyed *k, const uint8_t *key, size_t key_len) {
    int ret;
    switch (k->row->family) {
    case FAMILY_HMAC:
        ret = wc_HmacInit(&k->u.hmac, NULL, INVALID_DEVID);
        if (ret == 0) {
            ret = wc_HmacSetKey(&k->u.hmac, k->row->hash, key, (word32)key_len);
        }
        return ret;
    case FAMILY_CMAC:
        return wc_InitCmac(&k->u.cmac.keyed, key, (word32)key_len, WC_CMAC_AES, NULL);
    case FAMILY_GMAC:
        ret = wc_AesInit(&k->u.gmac.aes, NULL, INVALID_DEVID);
        if (ret == 0) {
            ret = wc_GmacSetKey(&k->u.gmac, key, (word32)key_len);
        }
        return ret;
    case FAMILY_POLY1305:
        return wc_Poly1305SetKey(&k->u.poly.keyed, key, (word32)key_len);
    }
    return WOLF_SHIM_UNKNOWN_ALGORITHM;
}

static int create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                  size_t tag_len, void **out, char *why, size_t why_len) {
    const struct row *row = NULL;
    struct keyed *k;
    int status;
    size_t i;

    *out = NULL;
    if (level != 0) {
        snprintf(why, why_len, "%s", MACBENCH_SHIM_NO_LEVELS);
        return WOLF_SHIM_UNKNOWN_ALGORITHM;
    }
    if (!initialised()) {
        reason(NULL, WOLF_SHIM_INIT, why, why_len);
        return WOLF_SHIM_INIT;
    }
    for (i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        if (strcmp(ROWS[i].name, algorithm) == 0) {
            row = &ROWS[i];
            break;
        }
    }
    status = row == NULL                                       ? WOLF_SHIM_UNKNOWN_ALGORITHM
             : row->key_len != 0 && key_len != row->key_len ? WOLF_SHIM_KEY_LENGTH
             : tag_len != row->tag_len                       ? WOLF_SHIM_TAG_LENGTH
                                                             : 0;
    if (status != 0) {
        reason(NULL, status, why, why_len);
        return status;
    }
    k = calloc(1, sizeof *k);
    if (k == NULL) {
        reason(NULL, WOLF_SHIM_NO_MEMORY, why, why_len);
        return WOLF_SHIM_NO_MEMORY;
    }
    k->row = row;
    status = key_context(k, key, key_len);
    if (status != 0) {
        reason(NULL, status, why, why_len);
        free(k);
        return status;
    }
    *out = k;
    return 0;
}

static void destroy(void *ctx) {
    struct keyed *k = ctx;
    if (k == NULL) {
        return;
    }
    switch (k->row->family) {
    case FAMILY_HMAC: wc_HmacFree(&k->u.hmac); break;
    case FAMILY_CMAC: wc_AesFree(&k->u.cmac.keyed.aes); break;
    case FAMILY_GMAC: wc_AesFree(&k->u.gmac.aes); break;
    case FAMILY_POLY1305: break;
    }
    free(k);
}

static int begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    struct keyed *k = ctx;
    (void)nonce;
    switch (k->row->family) {
    case FAMILY_GMAC:
        return WOLF_SHIM_NO_STREAMING;
    case FAMILY_CMAC:
        if (nonce_len != 0) {
            return WOLF_SHIM_NONCE;
        }
        k->u.cmac.work = k->u.cmac.keyed;
        return 0;
    case FAMILY_POLY1305:
        if (nonce_len != 0) {
            return WOLF_SHIM_NONCE;
        }
        k->u.poly.work = k->u.poly.keyed;
        return 0;
    case FAMILY_HMAC:
        /* wc_HmacFinal left the context keyed for the next message. */
        return nonce_len == 0 ? 0 : WOLF_SHIM_NONCE;
    }
    return WOLF_SHIM_UNKNOWN_ALGORITHM;
}

static int update(void *ctx, const uint8_t *data, size_t len) {
    struct keyed *k = ctx;
    switch (k->row->family) {
    case FAMILY_HMAC: return wc_HmacUpdate(&k->u.hmac, data, (word32)len);
    case FAMILY_CMAC: return wc_CmacUpdate(&k->u.cmac.work, data, (word32)len);
    case FAMILY_GMAC: return WOLF_SHIM_NO_STREAMING;
    case FAMILY_POLY1305: return wc_Poly1305Update(&k->u.poly.work, data, (word32)len);
    }
    return WOLF_SHIM_UNKNOWN_ALGORITHM;
}

static int finish(void *ctx, uint8_t *tag, size_t tag_len) {
    struct keyed *k = ctx;
    uint8_t full[WC_MAX_DIGEST_SIZE];
    word32 full_len = (word32)k->row->tag_len;
    int ret = WOLF_SHIM_UNKNOWN_ALGORITHM;
    if (tag_len == 0 || tag_len > k->row->tag_len) {
        return WOLF_SHIM_TAG_LENGTH;
    }
    switch (k->row->family) {
    case FAMILY_HMAC: ret = wc_HmacFinal(&k->u.hmac, full); break;
    case FAMILY_CMAC: ret = wc_CmacFinal(&k->u.cmac.work, full, &full_len); break;
    case FAMILY_GMAC: ret = WOLF_SHIM_NO_STREAMING; break;
    case FAMILY_POLY1305: ret = wc_Poly1305Final(&k->u.poly.work, full); break;
    }
    if (ret != 0) {
        return ret;
    }
    if (full_len != k->row->tag_len) {
        return WOLF_SHIM_TAG_LENGTH;
    }
    memcpy(tag, full, tag_len);
    return 0;
}

static int tag(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
               uint8_t *out, size_t tag_len) {
    struct keyed *k = ctx;
    int status;
    if (k->row->family == FAMILY_GMAC) {
        /* One call: IV, the message as associated data, the tag. */
        uint8_t full[16];
        if (nonce_len == 0) {
            return WOLF_SHIM_NONCE;
        }
        if (tag_len == 0 || tag_len > sizeof full) {
            return WOLF_SHIM_TAG_LENGTH;
        }
        status = wc_GmacUpdate(&k->u.gmac, nonce, (word32)nonce_len, msg, (word32)len, full,
                               sizeof full);
        if (status == 0) {
            memcpy(out, full, tag_len);
        }
        return status;
    }
    status = begin(ctx, nonce, nonce_len);
    if (status == 0) {
        status = update(ctx, msg, len);
    }
    if (status == 0) {
        status = finish(ctx, out, tag_len);
    }
    return status;
}

/* Every MAC streams but GMAC (see the top of the file). */
static int streams(const void *ctx) {
    return ((const struct keyed *)ctx)->row->family != FAMILY_GMAC;
}

/* "version=wolfSSL 5.5.4" and what this build's AES, GHASH and SHA run on. */
static void describe(char *out, size_t out_len) {
#if defined(WOLFSSL_AESNI) || defined(USE_INTEL_SPEEDUP)
    const char *code = "intel-asm";
#else
    const char *code = "portable-c";
#endif
    snprintf(out, out_len, "version=wolfSSL %s\ncode=%s\n", wolfSSL_lib_version(), code);
}

const macbench_shim macbench_shim_wolfssl = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "wolfssl",
    .create = create,
    .destroy = destroy,
    .tag = tag,
    .begin = begin,
    .update = update,
    .finish = finish,
    .streams = streams,
    .reason = reason,
    .describe = describe,
};
