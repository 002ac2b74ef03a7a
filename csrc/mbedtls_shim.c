/* mbedtls_shim.c - a small C face on Mbed TLS 2.28 (libmbedcrypto) for macbench's `mbedtls` backend.
 *
 * Why a shim: Mbed TLS's contexts are C structs whose layout depends on the library's config.h, so
 * Rust does not mirror them; it holds an opaque handle from the shim's create and calls the entry
 * points of the `macbench_shim_mbedtls` table (csrc/macbench_shim.h) at the end of this file. Key-dependent work happens once, in mbtls_new(): the HMAC ipad/opad blocks
 * (mbedtls_md_hmac_starts), the AES key schedule and CMAC subkeys (mbedtls_cipher_cmac_starts), the
 * GHASH table (mbedtls_gcm_setkey), the clamped Poly1305 r and s (mbedtls_poly1305_starts). Per message
 * only the documented cheap paths run: HMAC update/finish/reset, CMAC update/finish/reset, GCM
 * starts (nonce, message as additional data)/finish, and a copy of the keyed Poly1305 context. Nothing
 * here allocates per message.
 *
 * Errors are return codes: 0 is success, Mbed TLS's own codes are negative (mbtls_strerror describes
 * them), and the shim's codes are the positive MBTLS_ERR_* below.
 *
 * Built by build.rs with the `cc` crate only when Mbed TLS is found (cfg `have_mbedtls`). */

#if !defined(MBEDTLS_CONFIG_FILE)
#include <mbedtls/config.h>
#else
#include MBEDTLS_CONFIG_FILE
#endif

#include <mbedtls/cipher.h>
#include <mbedtls/md.h>
#include <mbedtls/version.h>
#if defined(MBEDTLS_CMAC_C)
#include <mbedtls/cmac.h>
#endif
#if defined(MBEDTLS_GCM_C)
#include <mbedtls/gcm.h>
#endif
#if defined(MBEDTLS_POLY1305_C)
#include <mbedtls/poly1305.h>
#endif
#if defined(MBEDTLS_ERROR_C)
#include <mbedtls/error.h>
#endif
#if defined(MBEDTLS_AESNI_C)
#include <mbedtls/aesni.h>
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macbench_shim.h"

/* The shim's own error codes (Mbed TLS's are negative). */
#define MBTLS_ERR_UNKNOWN_ALGORITHM 1 /* not an algorithm this shim implements */
#define MBTLS_ERR_TAG_LENGTH 2        /* the requested tag is longer than the construction's */
#define MBTLS_ERR_NO_MEMORY 3         /* malloc of the handle failed */
#define MBTLS_ERR_NO_STREAMING 4      /* GMAC: Mbed TLS 2.28 takes the additional data in one piece */
#define MBTLS_ERR_NONCE_LENGTH 5      /* GMAC: an empty IV */
/* 100 + n: the module the algorithm needs is disabled in this Mbed TLS build's config.h. */
#define MBTLS_ERR_DISABLED_MD 100
#define MBTLS_ERR_DISABLED_CMAC 101
#define MBTLS_ERR_DISABLED_GCM 102
#define MBTLS_ERR_DISABLED_POLY1305 103

/* Longest tag any construction here produces (HMAC-SHA-512). */
#define MBTLS_MAX_TAG 64

enum kind { KIND_HMAC, KIND_CMAC, KIND_GMAC, KIND_POLY1305 };

struct mbtls_mac {
    enum kind kind;
    size_t full_len; /* the construction's tag length; shorter tags are its truncation */
    union {
        mbedtls_md_context_t md;
        mbedtls_cipher_context_t cipher;
#if defined(MBEDTLS_GCM_C)
        mbedtls_gcm_context gcm;
#endif
#if defined(MBEDTLS_POLY1305_C)
        struct {
            /* Keyed once; each message starts from a copy (the context holds no pointers). */
            mbedtls_poly1305_context keyed;
            mbedtls_poly1305_context work;
        } poly;
#endif
    } u;
};

typedef struct mbtls_mac mbtls_mac;

static int new_hmac(mbtls_mac *m, mbedtls_md_type_t type, const uint8_t *key, size_t key_len) {
    const mbedtls_md_info_t *info = mbedtls_md_info_from_type(type);
    int ret;
    if (info == NULL) {
        return MBTLS_ERR_DISABLED_MD;
    }
    m->kind = KIND_HMAC;
    m->full_len = mbedtls_md_get_size(info);
    mbedtls_md_init(&m->u.md);
    ret = mbedtls_md_setup(&m->u.md, info, 1);
    if (ret == 0) {
        /* ipad/opad blocks derived here, once; ready for the first message's update. */
        ret = mbedtls_md_hmac_starts(&m->u.md, key, key_len);
    }
    if (ret != 0) {
        mbedtls_md_free(&m->u.md);
    }
    return ret;
}

static int new_cmac(mbtls_mac *m, const uint8_t *key, size_t key_len) {
#if defined(MBEDTLS_CMAC_C) && defined(MBEDTLS_AES_C)
    /* The AES key size follows the key (16, 24 or 32 bytes, checked by the registry); 2.28's own CMAC
     * (no MBEDTLS_CMAC_ALT) takes all three. */
    const mbedtls_cipher_info_t *info = mbedtls_cipher_info_from_type(
        key_len == 32   ? MBEDTLS_CIPHER_AES_256_ECB
        : key_len == 24 ? MBEDTLS_CIPHER_AES_192_ECB
                        : MBEDTLS_CIPHER_AES_128_ECB);
    int ret;
    if (info == NULL || (key_len != 16 && key_len != 24 && key_len != 32)) {
        return MBTLS_ERR_UNKNOWN_ALGORITHM;
    }
    m->kind = KIND_CMAC;
    m->full_len = 16;
    mbedtls_cipher_init(&m->u.cipher);
    ret = mbedtls_cipher_setup(&m->u.cipher, info);
    if (ret == 0) {
        /* AES key schedule and the subkeys K1, K2, once. */
        ret = mbedtls_cipher_cmac_starts(&m->u.cipher, key, key_len * 8);
    }
    if (ret != 0) {
        mbedtls_cipher_free(&m->u.cipher);
    }
    return ret;
#else
    (void)m;
    (void)key;
    (void)key_len;
    return MBTLS_ERR_DISABLED_CMAC;
#endif
}

static int new_gmac(mbtls_mac *m, const uint8_t *key, size_t key_len) {
#if defined(MBEDTLS_GCM_C) && defined(MBEDTLS_AES_C)
    int ret;
    m->kind = KIND_GMAC;
    m->full_len = 16;
    mbedtls_gcm_init(&m->u.gcm);
    /* AES key schedule, H = E_K(0) and its GHASH multiplication table, once. */
    ret = mbedtls_gcm_setkey(&m->u.gcm, MBEDTLS_CIPHER_ID_AES, key, (unsigned int)(key_len * 8));
    if (ret != 0) {
        mbedtls_gcm_free(&m->u.gcm);
    }
    return ret;
#else
    (void)m;
    (void)key;
    (void)key_len;
    return MBTLS_ERR_DISABLED_GCM;
#endif
}

static int new_poly1305(mbtls_mac *m, const uint8_t *key, size_t key_len) {
#if defined(MBEDTLS_POLY1305_C)
    int ret;
    if (key_len != 32) {
        return MBTLS_ERR_UNKNOWN_ALGORITHM;
    }
    m->kind = KIND_POLY1305;
    m->full_len = 16;
    mbedtls_poly1305_init(&m->u.poly.keyed);
    mbedtls_poly1305_init(&m->u.poly.work);
    /* r clamped and s loaded, once (RFC 8439 §2.5: the 32-byte one-time key is r || s). */
    ret = mbedtls_poly1305_starts(&m->u.poly.keyed, key);
    if (ret != 0) {
        mbedtls_poly1305_free(&m->u.poly.keyed);
    }
    return ret;
#else
    (void)m;
    (void)key;
    (void)key_len;
    return MBTLS_ERR_DISABLED_POLY1305;
#endif
}

/* Release what key setup built, and the handle. */
static void free_keyed(mbtls_mac *m) {
    switch (m->kind) {
    case KIND_HMAC: mbedtls_md_free(&m->u.md); break;
    case KIND_CMAC: mbedtls_cipher_free(&m->u.cipher); break;
#if defined(MBEDTLS_GCM_C)
    case KIND_GMAC: mbedtls_gcm_free(&m->u.gcm); break;
#endif
#if defined(MBEDTLS_POLY1305_C)
    case KIND_POLY1305:
        mbedtls_poly1305_free(&m->u.poly.keyed);
        mbedtls_poly1305_free(&m->u.poly.work);
        break;
#endif
    default: break;
    }
    free(m);
}

/* Key setup. Returns 0 and a handle in *out, or an error code (*out stays NULL). tag_len is the tag the
 * caller will ask for: at most the construction's own length. */
static int mbtls_new(const char *algorithm, const uint8_t *key, size_t key_len, size_t tag_len,
              mbtls_mac **out) {
    mbtls_mac *m;
    int ret;
    *out = NULL;
    m = calloc(1, sizeof *m);
    if (m == NULL) {
        return MBTLS_ERR_NO_MEMORY;
    }
    if (strcmp(algorithm, "hmac-md5") == 0) {
        ret = new_hmac(m, MBEDTLS_MD_MD5, key, key_len);
    } else if (strcmp(algorithm, "hmac-sha1") == 0) {
        ret = new_hmac(m, MBEDTLS_MD_SHA1, key, key_len);
    } else if (strcmp(algorithm, "hmac-sha224") == 0) {
        ret = new_hmac(m, MBEDTLS_MD_SHA224, key, key_len);
    } else if (strcmp(algorithm, "hmac-sha256") == 0) {
        ret = new_hmac(m, MBEDTLS_MD_SHA256, key, key_len);
    } else if (strcmp(algorithm, "hmac-sha384") == 0) {
        ret = new_hmac(m, MBEDTLS_MD_SHA384, key, key_len);
    } else if (strcmp(algorithm, "hmac-sha512") == 0) {
        ret = new_hmac(m, MBEDTLS_MD_SHA512, key, key_len);
    } else if (strcmp(algorithm, "cmac-aes128") == 0 || strcmp(algorithm, "cmac-aes192") == 0 ||
               strcmp(algorithm, "cmac-aes256") == 0) {
        ret = new_cmac(m, key, key_len);
    } else if (strcmp(algorithm, "gmac-aes128") == 0 || strcmp(algorithm, "gmac-aes192") == 0 ||
               strcmp(algorithm, "gmac-aes256") == 0) {
        /* The AES key size follows the key (16, 24 or 32 bytes, checked by the registry). */
        ret = new_gmac(m, key, key_len);
    } else if (strcmp(algorithm, "poly1305") == 0) {
        ret = new_poly1305(m, key, key_len);
    } else {
        ret = MBTLS_ERR_UNKNOWN_ALGORITHM;
    }
    if (ret != 0) {
        free(m);
        return ret;
    }
    if (tag_len > m->full_len) {
        free_keyed(m);
        return MBTLS_ERR_TAG_LENGTH;
    }
    *out = m;
    return 0;
}

static void mbtls_free(mbtls_mac *m) {
    if (m != NULL) {
        free_keyed(m);
    }
}

/* Whether begin/update/finish can feed a message in pieces (all but GMAC). */
static int mbtls_streams(const mbtls_mac *m) { return m->kind != KIND_GMAC; }

/* Streaming: begin (nonce unused: no streaming construction here takes one), any number of updates,
 * finish. After finish (successful or not) the handle is ready for the next message. */
static int mbtls_begin(mbtls_mac *m) {
    switch (m->kind) {
    case KIND_HMAC:
    case KIND_CMAC:
        /* Already reset after the previous message (or fresh from key setup). */
        return 0;
#if defined(MBEDTLS_POLY1305_C)
    case KIND_POLY1305:
        m->u.poly.work = m->u.poly.keyed;
        return 0;
#endif
    default: return MBTLS_ERR_NO_STREAMING;
    }
}

static int mbtls_update(mbtls_mac *m, const uint8_t *data, size_t len) {
    if (len == 0) {
        return 0;
    }
    switch (m->kind) {
    case KIND_HMAC: return mbedtls_md_hmac_update(&m->u.md, data, len);
#if defined(MBEDTLS_CMAC_C)
    case KIND_CMAC: return mbedtls_cipher_cmac_update(&m->u.cipher, data, len);
#endif
#if defined(MBEDTLS_POLY1305_C)
    case KIND_POLY1305: return mbedtls_poly1305_update(&m->u.poly.work, data, len);
#endif
    default: return MBTLS_ERR_NO_STREAMING;
    }
}

static int mbtls_finish(mbtls_mac *m, uint8_t *tag, size_t tag_len) {
    uint8_t full[MBTLS_MAX_TAG];
    int ret;
    if (tag_len > m->full_len) {
        return MBTLS_ERR_TAG_LENGTH;
    }
    switch (m->kind) {
    case KIND_HMAC: {
        int reset;
        ret = mbedtls_md_hmac_finish(&m->u.md, full);
        /* Back to the keyed inner state for the next message: one ipad block is hashed again. */
        reset = mbedtls_md_hmac_reset(&m->u.md);
        ret = ret != 0 ? ret : reset;
        break;
    }
#if defined(MBEDTLS_CMAC_C)
    case KIND_CMAC: {
        int reset;
        ret = mbedtls_cipher_cmac_finish(&m->u.cipher, full);
        reset = mbedtls_cipher_cmac_reset(&m->u.cipher);
        ret = ret != 0 ? ret : reset;
        break;
    }
#endif
#if defined(MBEDTLS_POLY1305_C)
    case KIND_POLY1305: ret = mbedtls_poly1305_finish(&m->u.poly.work, full); break;
#endif
    default: return MBTLS_ERR_NO_STREAMING;
    }
    if (ret == 0) {
        memcpy(tag, full, tag_len);
    }
    return ret;
}

/* One message, whole. For GMAC the nonce is the 12-byte IV and the message the additional data. */
static int mbtls_tag(mbtls_mac *m, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
              uint8_t *tag, size_t tag_len) {
    int ret;
    if (m->kind == KIND_GMAC) {
#if defined(MBEDTLS_GCM_C)
        uint8_t full[16];
        /* GCM takes any non-empty IV (other lengths than 12 bytes go through GHASH). */
        if (nonce_len == 0) {
            return MBTLS_ERR_NONCE_LENGTH;
        }
        if (tag_len > sizeof full) {
            return MBTLS_ERR_TAG_LENGTH;
        }
        /* 2.28 API: the additional data goes in with the IV; no plaintext follows. */
        ret = mbedtls_gcm_starts(&m->u.gcm, MBEDTLS_GCM_ENCRYPT, nonce, nonce_len,
                                 len == 0 ? NULL : msg, len);
        if (ret == 0) {
            ret = mbedtls_gcm_finish(&m->u.gcm, full, sizeof full);
        }
        if (ret == 0) {
            memcpy(tag, full, tag_len);
        }
        return ret;
#else
        return MBTLS_ERR_DISABLED_GCM;
#endif
    }
    (void)nonce;
    (void)nonce_len;
    ret = mbtls_begin(m);
    if (ret == 0) {
        ret = mbtls_update(m, msg, len);
    }
    if (ret != 0) {
        /* Still finish, so the next message starts from the keyed state. */
        (void)mbtls_finish(m, tag, 0);
        return ret;
    }
    return mbtls_finish(m, tag, tag_len);
}

/* A description of an error code from this shim or from Mbed TLS, NUL-terminated into out. */
static void mbtls_strerror(int code, char *out, size_t out_len) {
    const char *what = NULL;
    if (out == NULL || out_len == 0) {
        return;
    }
    switch (code) {
    case MBTLS_ERR_UNKNOWN_ALGORITHM: what = "algorithm or key length not implemented by the shim"; break;
    case MBTLS_ERR_TAG_LENGTH: what = "tag longer than the construction's"; break;
    case MBTLS_ERR_NO_MEMORY: what = "out of memory"; break;
    case MBTLS_ERR_NO_STREAMING: what = "Mbed TLS 2.28 GCM takes the additional data in one piece"; break;
    case MBTLS_ERR_NONCE_LENGTH: what = "GMAC needs a non-empty IV"; break;
    case MBTLS_ERR_DISABLED_MD:
        what = "the hash is disabled in this Mbed TLS build (config.h: MBEDTLS_MD5_C/SHA1_C/SHA256_C/SHA512_C)";
        break;
    case MBTLS_ERR_DISABLED_CMAC:
        what = "MBEDTLS_CMAC_C (or MBEDTLS_AES_C) is disabled in this Mbed TLS build's config.h";
        break;
    case MBTLS_ERR_DISABLED_GCM:
        what = "MBEDTLS_GCM_C (or MBEDTLS_AES_C) is disabled in this Mbed TLS build's config.h";
        break;
    case MBTLS_ERR_DISABLED_POLY1305:
        what = "MBEDTLS_POLY1305_C is disabled in this Mbed TLS build's config.h";
        break;
    default: break;
    }
    if (what != NULL) {
        snprintf(out, out_len, "%s", what);
        return;
    }
#if defined(MBEDTLS_ERROR_C)
    mbedtls_strerror(code, out, out_len);
#else
    snprintf(out, out_len, "Mbed TLS error -0x%04x", (unsigned)-code);
#endif
}

/* The library's version (run time, not the headers'): "2.28.3". out needs at least 9 bytes. */
static void mbtls_version(char *out) {
#if defined(MBEDTLS_VERSION_C)
    mbedtls_version_get_string(out);
#else
    snprintf(out, 9, "%s", MBEDTLS_VERSION_STRING);
#endif
}

/* Whether Mbed TLS uses AES-NI (bit 0) and PCLMULQDQ (bit 1) here: it asks CPUID once and keeps the
 * answer in private statics, with no way to turn it off at run time. */
static unsigned mbtls_aesni(void) {
#if defined(MBEDTLS_AESNI_C) && defined(MBEDTLS_HAVE_X86_64)
    unsigned f = 0;
    f |= mbedtls_aesni_has_support(MBEDTLS_AESNI_AES) ? 1u : 0u;
    f |= mbedtls_aesni_has_support(MBEDTLS_AESNI_CLMUL) ? 2u : 0u;
    return f;
#else
    return 0;
#endif
}

/* The table of csrc/macbench_shim.h: thin adapters where the entry points above take their own
 * types. */

static int shim_create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                       size_t tag_len, void **out, char *why, size_t why_len) {
    mbtls_mac *m = NULL;
    int ret;
    *out = NULL;
    if (level != 0) {
        snprintf(why, why_len, "%s", MACBENCH_SHIM_NO_LEVELS);
        return MBTLS_ERR_UNKNOWN_ALGORITHM;
    }
    ret = mbtls_new(algorithm, key, key_len, tag_len, &m);
    *out = m;
    if (ret != 0) {
        mbtls_strerror(ret, why, why_len);
    }
    return ret;
}

static void shim_destroy(void *ctx) { mbtls_free(ctx); }

static int shim_tag(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
                    uint8_t *tag, size_t tag_len) {
    return mbtls_tag(ctx, nonce, nonce_len, msg, len, tag, tag_len);
}

/* No streaming construction here takes a nonce (GMAC does not stream in 2.28). */
static int shim_begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    (void)nonce;
    (void)nonce_len;
    return mbtls_begin(ctx);
}

static int shim_update(void *ctx, const uint8_t *data, size_t len) { return mbtls_update(ctx, data, len); }

static int shim_finish(void *ctx, uint8_t *tag, size_t tag_len) { return mbtls_finish(ctx, tag, tag_len); }

static int shim_streams(const void *ctx) { return mbtls_streams(ctx); }

/* The shim's own codes and Mbed TLS's (mbedtls_strerror), in words. */
static void shim_reason(const void *ctx, int status, char *out, size_t out_len) {
    (void)ctx;
    mbtls_strerror(status, out, out_len);
}

/* "version=2.28.3", and on x86 whether Mbed TLS picked AES-NI and PCLMULQDQ here. */
static void shim_describe(char *out, size_t out_len) {
    char version[32] = {0};
    unsigned aesni = mbtls_aesni();
    mbtls_version(version);
#if defined(__x86_64__) || defined(__i386__)
    snprintf(out, out_len, "version=%s\naesni=%s\npclmulqdq=%s\n", version, (aesni & 1u) ? "yes" : "no",
             (aesni & 2u) ? "yes" : "no");
#else
    (void)aesni;
    snprintf(out, out_len, "version=%s\n", version);
#endif
}

const macbench_shim macbench_shim_mbedtls = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "mbedtls",
    .create = shim_create,
    .destroy = shim_destroy,
    .tag = shim_tag,
    .begin = shim_begin,
    .update = shim_update,
    .finish = shim_finish,
    .streams = shim_streams,
    .reason = shim_reason,
    .describe = shim_describe,
};
