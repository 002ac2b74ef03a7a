/* sodium_shim.c - libsodium's MACs behind macbench's one shim table (csrc/macbench_shim.h).
 *
 * Why libsodium: it is the crypto library of many phone apps, messengers and embedded projects, so
 * its MACs are what a good share of macbench's users actually run. It offers, as MACs with a key:
 * HMAC-SHA-256 and HMAC-SHA-512 (crypto_auth_hmacsha256/512), Poly1305 (crypto_onetimeauth_poly1305),
 * keyed BLAKE2b (crypto_generichash_blake2b) and SipHash-2-4 (crypto_shorthash_siphash24). Its
 * crypto_auth_hmacsha512256 is HMAC-SHA-512 truncated to 32 bytes, not HMAC over SHA-512/256, so it is
 * not registered as hmac-sha512-256.
 *
 * Key setup happens once in `create`: the HMAC inner and outer states (crypto_auth_hmacsha*_init), the
 * keyed BLAKE2b state (its key block compressed once), Poly1305's clamped r and s. Per message the
 * keyed state is copied into a work state (a struct copy, as OpenSSL's EVP_MAC re-init copies its
 * keyed context), then update and final: nothing allocates per message. SipHash has no incremental
 * API in libsodium; it is one call per message and does not stream.
 *
 * libsodium picks its BLAKE2b and Poly1305 code paths (AVX2, SSE4.1, SSSE3, reference) in
 * sodium_init(), which `create` calls (it is idempotent and thread-safe); `describe` says which CPU
 * features libsodium detected.
 *
 * Built by build.rs with the `cc` crate only when libsodium is found (cfg `have_sodium`).
 */

/* posix_memalign */
#define _POSIX_C_SOURCE 200112L
#include <sodium.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macbench_shim.h"

/* Statuses; `reason` names them. */
#define SODIUM_SHIM_OK 0
#define SODIUM_SHIM_UNKNOWN_ALGORITHM 1
#define SODIUM_SHIM_KEY_LENGTH 2
#define SODIUM_SHIM_TAG_LENGTH 3
#define SODIUM_SHIM_NONCE 4
#define SODIUM_SHIM_NO_MEMORY 5
#define SODIUM_SHIM_INIT 6
#define SODIUM_SHIM_LIBRARY 7
#define SODIUM_SHIM_NO_STREAMING 8

enum algorithm { HMAC_SHA256, HMAC_SHA512, POLY1305, BLAKE2B, SIPHASH24 };

struct row {
    const char *name;
    enum algorithm algorithm;
    size_t tag_len;
};

static const struct row ROWS[] = {
    {"hmac-sha256", HMAC_SHA256, crypto_auth_hmacsha256_BYTES},
    {"hmac-sha512", HMAC_SHA512, crypto_auth_hmacsha512_BYTES},
    {"poly1305", POLY1305, crypto_onetimeauth_poly1305_BYTES},
    {"blake2b-keyed", BLAKE2B, crypto_generichash_blake2b_BYTES_MAX},
    {"siphash-2-4", SIPHASH24, crypto_shorthash_siphash24_BYTES},
};

/* A keyed state and the work state each message starts from a copy of. */
union state {
    crypto_auth_hmacsha256_state hmac256;
    crypto_auth_hmacsha512_state hmac512;
    crypto_onetimeauth_poly1305_state poly1305;
    crypto_generichash_blake2b_state blake2b;
    unsigned char siphash_key[crypto_shorthash_siphash24_KEYBYTES];
};

struct keyed {
    enum algorithm algorithm;
    size_t tag_len;
    /* libsodium's BLAKE2b state must be 64-byte aligned (CRYPTO_ALIGN(64) in its header): the object
     * is allocated so, and the unions start on 64-byte boundaries. */
    union state keyed __attribute__((aligned(64)));
    union state work __attribute__((aligned(64)));
};

static int key_state(struct keyed *k, const uint8_t *key, size_t key_len) {
    switch (k->algorithm) {
    case HMAC_SHA256: return crypto_auth_hmacsha256_init(&k->keyed.hmac256, key, key_len);
    case HMAC_SHA512: return crypto_auth_hmacsha512_init(&k->keyed.hmac512, key, key_len);
    case POLY1305:
        if (key_len != crypto_onetimeauth_poly1305_KEYBYTES) {
            return SODIUM_SHIM_KEY_LENGTH;
        }
        return crypto_onetimeauth_poly1305_init(&k->keyed.poly1305, key);
    case BLAKE2B:
        if (key_len < crypto_generichash_blake2b_KEYBYTES_MIN ||
            key_len > crypto_generichash_blake2b_KEYBYTES_MAX) {
            return SODIUM_SHIM_KEY_LENGTH;
        }
        return crypto_generichash_blake2b_init(&k->keyed.blake2b, key, key_len, k->tag_len);
    case SIPHASH24:
        if (key_len != crypto_shorthash_siphash24_KEYBYTES) {
            return SODIUM_SHIM_KEY_LENGTH;
        }
        memcpy(k->keyed.siphash_key, key, key_len);
        return 0;
    }
    return SODIUM_SHIM_UNKNOWN_ALGORITHM;
}

static void reason(const void *ctx, int status, char *out, size_t out_len);

static int create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                  size_t tag_len, void **out, char *why, size_t why_len) {
    const struct row *row = NULL;
    struct keyed *k = NULL;
    size_t i;
    int status;
    *out = NULL;
    if (level != 0) {
        snprintf(why, why_len, "%s", MACBENCH_SHIM_NO_LEVELS);
        return SODIUM_SHIM_UNKNOWN_ALGORITHM;
    }
    /* 0: initialised now; 1: already; -1: failed. */
    if (sodium_init() < 0) {
        reason(NULL, SODIUM_SHIM_INIT, why, why_len);
        return SODIUM_SHIM_INIT;
    }
    for (i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        if (strcmp(ROWS[i].name, algorithm) == 0) {
            row = &ROWS[i];
        }
    }
    status = row == NULL ? SODIUM_SHIM_UNKNOWN_ALGORITHM
             : tag_len != row->tag_len ? SODIUM_SHIM_TAG_LENGTH
             : posix_memalign((void **)&k, 64, sizeof *k) != 0 ? SODIUM_SHIM_NO_MEMORY
                                                                : SODIUM_SHIM_OK;
    if (status == SODIUM_SHIM_OK) {
        memset(k, 0, sizeof *k);
        k->algorithm = row->algorithm;
        k->tag_len = row->tag_len;
        status = key_state(k, key, key_len);
        if (status == -1) {
            status = SODIUM_SHIM_LIBRARY;
        }
    }
    if (status != SODIUM_SHIM_OK) {
        free(k);
        reason(NULL, status, why, why_len);
        return status;
    }
    *out = k;
    return SODIUM_SHIM_OK;
}

static void destroy(void *ctx) {
    if (ctx != NULL) {
        sodium_memzero(ctx, sizeof(struct keyed));
        free(ctx);
    }
}

/* A message starts from a copy of the keyed state; none of these constructions takes a nonce. */
static int begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    struct keyed *k = ctx;
    (void)nonce;
    if (nonce_len != 0) {
        return SODIUM_SHIM_NONCE;
    }
    if (k->algorithm == SIPHASH24) {
        return SODIUM_SHIM_NO_STREAMING;
    }
    k->work = k->keyed;
    return SODIUM_SHIM_OK;
}

static int update(void *ctx, const uint8_t *data, size_t len) {
    struct keyed *k = ctx;
    switch (k->algorithm) {
    case HMAC_SHA256: return crypto_auth_hmacsha256_update(&k->work.hmac256, data, len);
    case HMAC_SHA512: return crypto_auth_hmacsha512_update(&k->work.hmac512, data, len);
    case POLY1305: return crypto_onetimeauth_poly1305_update(&k->work.poly1305, data, len);
    case BLAKE2B: return crypto_generichash_blake2b_update(&k->work.blake2b, data, len);
    case SIPHASH24: return SODIUM_SHIM_NO_STREAMING;
    }
    return SODIUM_SHIM_UNKNOWN_ALGORITHM;
}

/* The full tag into a buffer, then its first tag_len bytes: a shorter tag is a prefix. */
static int finish(void *ctx, uint8_t *tag, size_t tag_len) {
    struct keyed *k = ctx;
    unsigned char full[crypto_generichash_blake2b_BYTES_MAX];
    int ret;
    if (tag_len == 0 || tag_len > k->tag_len) {
        return SODIUM_SHIM_TAG_LENGTH;
    }
    switch (k->algorithm) {
    case HMAC_SHA256: ret = crypto_auth_hmacsha256_final(&k->work.hmac256, full); break;
    case HMAC_SHA512: ret = crypto_auth_hmacsha512_final(&k->work.hmac512, full); break;
    case POLY1305: ret = crypto_onetimeauth_poly1305_final(&k->work.poly1305, full); break;
    case BLAKE2B: ret = crypto_generichash_blake2b_final(&k->work.blake2b, full, k->tag_len); break;
    default: return SODIUM_SHIM_NO_STREAMING;
    }
    if (ret != 0) {
        return SODIUM_SHIM_LIBRARY;
    }
    memcpy(tag, full, tag_len);
    return SODIUM_SHIM_OK;
}

static int tag(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
               uint8_t *out, size_t out_len) {
    struct keyed *k = ctx;
    int status;
    if (k->algorithm == SIPHASH24) {
        unsigned char full[crypto_shorthash_siphash24_BYTES];
        if (nonce_len != 0) {
            return SODIUM_SHIM_NONCE;
        }
        if (out_len == 0 || out_len > sizeof full) {
            return SODIUM_SHIM_TAG_LENGTH;
        }
        crypto_shorthash_siphash24(full, msg, len, k->keyed.siphash_key);
        memcpy(out, full, out_len);
        return SODIUM_SHIM_OK;
    }
    status = begin(ctx, nonce, nonce_len);
    if (status == SODIUM_SHIM_OK) {
        status = update(ctx, msg, len);
    }
    if (status != SODIUM_SHIM_OK) {
        return status < 0 ? SODIUM_SHIM_LIBRARY : status;
    }
    return finish(ctx, out, out_len);
}

static int streams(const void *ctx) { return ((const struct keyed *)ctx)->algorithm != SIPHASH24; }

static void reason(const void *ctx, int status, char *out, size_t out_len) {
    const char *what;
    (void)ctx;
    switch (status) {
    case SODIUM_SHIM_UNKNOWN_ALGORITHM: what = "algorithm not offered by libsodium's MACs"; break;
    case SODIUM_SHIM_KEY_LENGTH:
        what = "key length not taken by libsodium (Poly1305: 32 bytes; keyed BLAKE2b: 16 to 64; "
               "SipHash-2-4: 16)";
        break;
    case SODIUM_SHIM_TAG_LENGTH: what = "tag length differs from libsodium's"; break;
    case SODIUM_SHIM_NONCE: what = "none of libsodium's MACs here takes a nonce"; break;
    case SODIUM_SHIM_NO_MEMORY: what = "out of memory"; break;
    case SODIUM_SHIM_INIT: what = "sodium_init() failed"; break;
    case SODIUM_SHIM_LIBRARY: what = "libsodium refused the call (returned -1)"; break;
    case SODIUM_SHIM_NO_STREAMING: what = "libsodium's SipHash-2-4 is one call per message: no pieces"; break;
    default: what = "unknown shim status"; break;
    }
    snprintf(out, out_len, "%s", what);
}

/* "version=libsodium 1.0.18" and the CPU features its sodium_init() detected (they pick its BLAKE2b
 * and Poly1305 code). */
static void describe(char *out, size_t out_len) {
    if (sodium_init() < 0) {
        snprintf(out, out_len, "version=libsodium %s\n", sodium_version_string());
        return;
    }
    snprintf(out, out_len, "version=libsodium %s\ncpu=%s%s%s%s\n", sodium_version_string(),
             sodium_runtime_has_avx2() ? "+avx2 " : "-avx2 ",
             sodium_runtime_has_avx512f() ? "+avx512f " : "-avx512f ",
             sodium_runtime_has_sse41() ? "+sse4.1 " : "-sse4.1 ",
             sodium_runtime_has_ssse3() ? "+ssse3" : "-ssse3");
}

const macbench_shim macbench_shim_sodium = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "sodium",
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
