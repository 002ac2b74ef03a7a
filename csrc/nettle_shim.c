/* nettle_shim.c - a small C face on Nettle for macbench's `nettle` backend.
 *
 * Why a shim: Nettle's contexts are C structs whose layout and sizes Rust should not copy, and each MAC
 * has its own set of functions. Here one heap object holds the context of one algorithm; the Rust side
 * keys it once (create: AES key schedule, CMAC subkeys, HMAC inner and outer states, GHASH table,
 * UMAC's NH/L2/L3 keys), then per message calls tag (one shot) or begin/update/finish
 * (streaming, for the chunked self-test). Nothing allocates per message.
 *
 * HMAC over SHA-512/224, SHA-512/256 and SHA3-224/384/512, and CMAC over AES-192, have no named
 * functions in Nettle 3.8 (hmac_sha512_224_*, cmac_aes192_* do not exist): they are Nettle's generic
 * HMAC (hmac_set_key/hmac_digest with the nettle_hash of the hash: the HMAC_CTX/HMAC_SET_KEY/HMAC_DIGEST
 * macros of <nettle/hmac.h>, which is how Nettle builds its own hmac_sha256_*) and generic CMAC
 * (CMAC128_CTX/CMAC128_SET_KEY/... of <nettle/cmac.h> over aes192_encrypt, as its cmac_aes128_* are):
 * the library's code, nothing written here.
 *
 * Per message, only what the construction needs: HMAC and CMAC nothing at begin (Nettle's digest
 * functions leave the context in its keyed state, ready for the next message); GMAC sets the IV (which
 * also restarts GHASH); UMAC and Poly1305-AES set the nonce (their pad is one AES call on it, done at
 * digest).
 *
 * Plain C: no error crosses the boundary other than as a return code (MBNETTLE_*, below), which
 * `reason` turns into words; every entry point is reached through the `macbench_shim_nettle` table
 * (csrc/macbench_shim.h). Built by build.rs with the `cc` crate only when Nettle is found
 * (cfg `have_nettle`).
 */

#include <nettle/cmac.h>
#include <nettle/gcm.h>
#include <nettle/hmac.h>
#include <nettle/nettle-meta.h>
#include <nettle/poly1305.h>
#include <nettle/sha3.h>
#include <nettle/umac.h>
#include <nettle/version.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macbench_shim.h"

/* Return codes; `reason` names them. */
#define MBNETTLE_OK 0
#define MBNETTLE_UNKNOWN_ALGORITHM 1
#define MBNETTLE_KEY_LENGTH 2
#define MBNETTLE_TAG_LENGTH 3
#define MBNETTLE_NONCE_LENGTH 4
#define MBNETTLE_NO_MEMORY 5

enum algorithm {
    HMAC_MD5,
    HMAC_SHA1,
    HMAC_SHA256,
    HMAC_SHA224,
    HMAC_SHA384,
    HMAC_SHA512,
    HMAC_SHA512_224,
    HMAC_SHA512_256,
    HMAC_SHA3_224,
    HMAC_SHA3_384,
    HMAC_SHA3_512,
    CMAC_AES128,
    CMAC_AES192,
    CMAC_AES256,
    GMAC_AES128,
    GMAC_AES192,
    GMAC_AES256,
    UMAC32,
    UMAC64,
    UMAC96,
    UMAC128,
    POLY1305_AES,
};

struct keyed {
    enum algorithm algorithm;
    size_t tag_len;
    /* The generic HMACs: the hash they run over (NULL for the others). */
    const struct nettle_hash *hash;
    /* GMAC, streaming only: Nettle's gcm_*_update takes associated data in whole 16-byte blocks except
     * in its last call (it asserts so), so pieces are gathered here until a block is full. */
    uint8_t aad_block[GCM_BLOCK_SIZE];
    size_t aad_fill;
    union {
        struct hmac_md5_ctx hmac_md5;
        struct hmac_sha1_ctx hmac_sha1;
        struct hmac_sha256_ctx hmac_sha256;
        struct hmac_sha224_ctx hmac_sha224;
        struct hmac_sha384_ctx hmac_sha384;
        struct hmac_sha512_ctx hmac_sha512;
        /* SHA-512/224 and SHA-512/256 keep SHA-512's context (sha512_224_ctx is sha512_ctx). */
        struct HMAC_CTX(struct sha512_ctx) hmac_sha512_t;
        struct HMAC_CTX(struct sha3_224_ctx) hmac_sha3_224;
        struct HMAC_CTX(struct sha3_384_ctx) hmac_sha3_384;
        struct HMAC_CTX(struct sha3_512_ctx) hmac_sha3_512;
        struct cmac_aes128_ctx cmac_aes128;
        struct CMAC128_CTX(struct aes192_ctx) cmac_aes192;
        struct cmac_aes256_ctx cmac_aes256;
        struct gcm_aes128_ctx gcm_aes128;
        struct gcm_aes192_ctx gcm_aes192;
        struct gcm_aes256_ctx gcm_aes256;
        struct umac32_ctx umac32;
        struct umac64_ctx umac64;
        struct umac96_ctx umac96;
        struct umac128_ctx umac128;
        struct poly1305_aes_ctx poly1305_aes;
    } ctx;
};

struct row {
    const char *name;
    enum algorithm algorithm;
    /* 0: any key length (HMAC). */
    size_t key_len;
    size_t tag_len;
    /* The generic HMACs' hash; NULL otherwise. */
    const struct nettle_hash *hash;
};

static const struct row ROWS[] = {
    {"hmac-md5", HMAC_MD5, 0, MD5_DIGEST_SIZE, NULL},
    {"hmac-sha1", HMAC_SHA1, 0, SHA1_DIGEST_SIZE, NULL},
    {"hmac-sha256", HMAC_SHA256, 0, SHA256_DIGEST_SIZE, NULL},
    {"hmac-sha224", HMAC_SHA224, 0, SHA224_DIGEST_SIZE, NULL},
    {"hmac-sha384", HMAC_SHA384, 0, SHA384_DIGEST_SIZE, NULL},
    {"hmac-sha512", HMAC_SHA512, 0, SHA512_DIGEST_SIZE, NULL},
    {"hmac-sha512-224", HMAC_SHA512_224, 0, SHA512_224_DIGEST_SIZE, &nettle_sha512_224},
    {"hmac-sha512-256", HMAC_SHA512_256, 0, SHA512_256_DIGEST_SIZE, &nettle_sha512_256},
    {"hmac-sha3-224", HMAC_SHA3_224, 0, SHA3_224_DIGEST_SIZE, &nettle_sha3_224},
    {"hmac-sha3-384", HMAC_SHA3_384, 0, SHA3_384_DIGEST_SIZE, &nettle_sha3_384},
    {"hmac-sha3-512", HMAC_SHA3_512, 0, SHA3_512_DIGEST_SIZE, &nettle_sha3_512},
    {"cmac-aes128", CMAC_AES128, AES128_KEY_SIZE, CMAC128_DIGEST_SIZE, NULL},
    {"cmac-aes192", CMAC_AES192, AES192_KEY_SIZE, CMAC128_DIGEST_SIZE, NULL},
    {"cmac-aes256", CMAC_AES256, AES256_KEY_SIZE, CMAC128_DIGEST_SIZE, NULL},
    {"gmac-aes128", GMAC_AES128, AES128_KEY_SIZE, GCM_DIGEST_SIZE, NULL},
    {"gmac-aes192", GMAC_AES192, AES192_KEY_SIZE, GCM_DIGEST_SIZE, NULL},
    {"gmac-aes256", GMAC_AES256, AES256_KEY_SIZE, GCM_DIGEST_SIZE, NULL},
    {"umac32-aes128", UMAC32, UMAC_KEY_SIZE, UMAC32_DIGEST_SIZE, NULL},
    {"umac64-aes128", UMAC64, UMAC_KEY_SIZE, UMAC64_DIGEST_SIZE, NULL},
    {"umac96-aes128", UMAC96, UMAC_KEY_SIZE, UMAC96_DIGEST_SIZE, NULL},
    {"umac128-aes128", UMAC128, UMAC_KEY_SIZE, UMAC128_DIGEST_SIZE, NULL},
    {"poly1305-aes", POLY1305_AES, POLY1305_AES_KEY_SIZE, POLY1305_AES_DIGEST_SIZE, NULL},
};

static void reason(const void *handle, int code, char *out, size_t out_len);

/* Key setup. Returns MBNETTLE_OK and a handle in *out, or another code and *out = NULL. `tag_len` is the
 * registry's full tag length and must be the algorithm's. */
static int create_status(const char *name, const uint8_t *key, size_t key_len, size_t tag_len,
                         void **out) {
    const struct row *row = NULL;
    struct keyed *k;
    size_t i;

    *out = NULL;
    for (i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        if (strcmp(ROWS[i].name, name) == 0) {
            row = &ROWS[i];
            break;
        }
    }
    if (row == NULL) {
        return MBNETTLE_UNKNOWN_ALGORITHM;
    }
    if (row->key_len != 0 && key_len != row->key_len) {
        return MBNETTLE_KEY_LENGTH;
    }
    if (tag_len != row->tag_len) {
        return MBNETTLE_TAG_LENGTH;
    }
    k = calloc(1, sizeof *k);
    if (k == NULL) {
        return MBNETTLE_NO_MEMORY;
    }
    k->algorithm = row->algorithm;
    k->tag_len = row->tag_len;
    k->hash = row->hash;
    switch (k->algorithm) {
    case HMAC_MD5: hmac_md5_set_key(&k->ctx.hmac_md5, key_len, key); break;
    case HMAC_SHA1: hmac_sha1_set_key(&k->ctx.hmac_sha1, key_len, key); break;
    case HMAC_SHA256: hmac_sha256_set_key(&k->ctx.hmac_sha256, key_len, key); break;
    case HMAC_SHA224: hmac_sha224_set_key(&k->ctx.hmac_sha224, key_len, key); break;
    case HMAC_SHA384: hmac_sha384_set_key(&k->ctx.hmac_sha384, key_len, key); break;
    case HMAC_SHA512: hmac_sha512_set_key(&k->ctx.hmac_sha512, key_len, key); break;
    case HMAC_SHA512_224:
    case HMAC_SHA512_256: HMAC_SET_KEY(&k->ctx.hmac_sha512_t, k->hash, key_len, key); break;
    case HMAC_SHA3_224: HMAC_SET_KEY(&k->ctx.hmac_sha3_224, k->hash, key_len, key); break;
    case HMAC_SHA3_384: HMAC_SET_KEY(&k->ctx.hmac_sha3_384, k->hash, key_len, key); break;
    case HMAC_SHA3_512: HMAC_SET_KEY(&k->ctx.hmac_sha3_512, k->hash, key_len, key); break;
    case CMAC_AES128: cmac_aes128_set_key(&k->ctx.cmac_aes128, key); break;
    case CMAC_AES192:
        CMAC128_SET_KEY(&k->ctx.cmac_aes192, aes192_set_encrypt_key, aes192_encrypt, key);
        break;
    case CMAC_AES256: cmac_aes256_set_key(&k->ctx.cmac_aes256, key); break;
    case GMAC_AES128: gcm_aes128_set_key(&k->ctx.gcm_aes128, key); break;
    case GMAC_AES192: gcm_aes192_set_key(&k->ctx.gcm_aes192, key); break;
    case GMAC_AES256: gcm_aes256_set_key(&k->ctx.gcm_aes256, key); break;
    case UMAC32: umac32_set_key(&k->ctx.umac32, key); break;
    case UMAC64: umac64_set_key(&k->ctx.umac64, key); break;
    case UMAC96: umac96_set_key(&k->ctx.umac96, key); break;
    case UMAC128: umac128_set_key(&k->ctx.umac128, key); break;
    case POLY1305_AES: poly1305_aes_set_key(&k->ctx.poly1305_aes, key); break;
    }
    *out = k;
    return MBNETTLE_OK;
}

static int create(const char *name, int level, const uint8_t *key, size_t key_len, size_t tag_len,
                  void **out, char *why, size_t why_len) {
    int status;
    *out = NULL;
    if (level != 0) {
        snprintf(why, why_len, "%s", MACBENCH_SHIM_NO_LEVELS);
        return MBNETTLE_UNKNOWN_ALGORITHM;
    }
    status = create_status(name, key, key_len, tag_len, out);
    if (status != MBNETTLE_OK) {
        reason(NULL, status, why, why_len);
    }
    return status;
}

static void destroy(void *handle) { free(handle); }

/* Start a message: the nonce where the construction takes one. */
static int begin(void *handle, const uint8_t *nonce, size_t nonce_len) {
    struct keyed *k = handle;
    int umac = k->algorithm == UMAC32 || k->algorithm == UMAC64 || k->algorithm == UMAC96 ||
               k->algorithm == UMAC128;
    if (umac && (nonce_len < UMAC_MIN_NONCE_SIZE || nonce_len > UMAC_MAX_NONCE_SIZE)) {
        return MBNETTLE_NONCE_LENGTH;
    }
    switch (k->algorithm) {
    case HMAC_MD5:
    case HMAC_SHA1:
    case HMAC_SHA224:
    case HMAC_SHA256:
    case HMAC_SHA384:
    case HMAC_SHA512:
    case HMAC_SHA512_224:
    case HMAC_SHA512_256:
    case HMAC_SHA3_224:
    case HMAC_SHA3_384:
    case HMAC_SHA3_512:
    case CMAC_AES128:
    case CMAC_AES192:
    case CMAC_AES256:
        /* The last digest left the keyed state. */
        return nonce_len == 0 ? MBNETTLE_OK : MBNETTLE_NONCE_LENGTH;
    case GMAC_AES128:
    case GMAC_AES192:
    case GMAC_AES256:
        if (nonce_len == 0) {
            return MBNETTLE_NONCE_LENGTH;
        }
        switch (k->algorithm) {
        case GMAC_AES192: gcm_aes192_set_iv(&k->ctx.gcm_aes192, nonce_len, nonce); break;
        case GMAC_AES256: gcm_aes256_set_iv(&k->ctx.gcm_aes256, nonce_len, nonce); break;
        default: gcm_aes128_set_iv(&k->ctx.gcm_aes128, nonce_len, nonce); break;
        }
        k->aad_fill = 0;
        return MBNETTLE_OK;
    case UMAC32: umac32_set_nonce(&k->ctx.umac32, nonce_len, nonce); return MBNETTLE_OK;
    case UMAC64: umac64_set_nonce(&k->ctx.umac64, nonce_len, nonce); return MBNETTLE_OK;
    case UMAC96: umac96_set_nonce(&k->ctx.umac96, nonce_len, nonce); return MBNETTLE_OK;
    case UMAC128: umac128_set_nonce(&k->ctx.umac128, nonce_len, nonce); return MBNETTLE_OK;
    case POLY1305_AES:
        if (nonce_len != POLY1305_AES_NONCE_SIZE) {
            return MBNETTLE_NONCE_LENGTH;
        }
        poly1305_aes_set_nonce(&k->ctx.poly1305_aes, nonce);
        return MBNETTLE_OK;
    }
    return MBNETTLE_UNKNOWN_ALGORITHM;
}

static int is_gmac(const struct keyed *k) {
    return k->algorithm == GMAC_AES128 || k->algorithm == GMAC_AES192 || k->algorithm == GMAC_AES256;
}

/* Associated data into the GCM context of this key size. */
static void gcm_aad(struct keyed *k, size_t len, const uint8_t *data) {
    switch (k->algorithm) {
    case GMAC_AES192: gcm_aes192_update(&k->ctx.gcm_aes192, len, data); break;
    case GMAC_AES256: gcm_aes256_update(&k->ctx.gcm_aes256, len, data); break;
    default: gcm_aes128_update(&k->ctx.gcm_aes128, len, data); break;
    }
}

/* GMAC streaming: the message is GCM's associated data (no plaintext follows), fed to Nettle in whole
 * blocks; the partial last block waits in aad_block for finish. */
static void gmac_update(struct keyed *k, const uint8_t *data, size_t len) {
    size_t whole;
    if (k->aad_fill > 0) {
        size_t take = GCM_BLOCK_SIZE - k->aad_fill;
        if (take > len) {
            take = len;
        }
        memcpy(k->aad_block + k->aad_fill, data, take);
        k->aad_fill += take;
        data += take;
        len -= take;
        if (k->aad_fill < GCM_BLOCK_SIZE) {
            return;
        }
        gcm_aad(k, GCM_BLOCK_SIZE, k->aad_block);
        k->aad_fill = 0;
    }
    whole = len - len % GCM_BLOCK_SIZE;
    gcm_aad(k, whole, data);
    memcpy(k->aad_block, data + whole, len - whole);
    k->aad_fill = len - whole;
}

/* Nettle's update functions cannot fail. */
static int update(void *handle, const uint8_t *data, size_t len) {
    struct keyed *k = handle;
    switch (k->algorithm) {
    case HMAC_MD5: hmac_md5_update(&k->ctx.hmac_md5, len, data); break;
    case HMAC_SHA1: hmac_sha1_update(&k->ctx.hmac_sha1, len, data); break;
    case HMAC_SHA256: hmac_sha256_update(&k->ctx.hmac_sha256, len, data); break;
    case HMAC_SHA224: hmac_sha224_update(&k->ctx.hmac_sha224, len, data); break;
    case HMAC_SHA384: hmac_sha384_update(&k->ctx.hmac_sha384, len, data); break;
    case HMAC_SHA512: hmac_sha512_update(&k->ctx.hmac_sha512, len, data); break;
    case HMAC_SHA512_224:
    case HMAC_SHA512_256: hmac_update(&k->ctx.hmac_sha512_t.state, k->hash, len, data); break;
    case HMAC_SHA3_224: hmac_update(&k->ctx.hmac_sha3_224.state, k->hash, len, data); break;
    case HMAC_SHA3_384: hmac_update(&k->ctx.hmac_sha3_384.state, k->hash, len, data); break;
    case HMAC_SHA3_512: hmac_update(&k->ctx.hmac_sha3_512.state, k->hash, len, data); break;
    case CMAC_AES128: cmac_aes128_update(&k->ctx.cmac_aes128, len, data); break;
    case CMAC_AES192: CMAC128_UPDATE(&k->ctx.cmac_aes192, aes192_encrypt, len, data); break;
    case CMAC_AES256: cmac_aes256_update(&k->ctx.cmac_aes256, len, data); break;
    case GMAC_AES128:
    case GMAC_AES192:
    case GMAC_AES256: gmac_update(k, data, len); break;
    case UMAC32: umac32_update(&k->ctx.umac32, len, data); break;
    case UMAC64: umac64_update(&k->ctx.umac64, len, data); break;
    case UMAC96: umac96_update(&k->ctx.umac96, len, data); break;
    case UMAC128: umac128_update(&k->ctx.umac128, len, data); break;
    case POLY1305_AES: poly1305_aes_update(&k->ctx.poly1305_aes, len, data); break;
    }
    return MBNETTLE_OK;
}

/* Finish a message into tag[0..tag_len]; tag_len may be shorter than the full tag (a prefix). */
static int finish(void *handle, uint8_t *tag, size_t tag_len) {
    struct keyed *k = handle;
    if (tag_len == 0 || tag_len > k->tag_len) {
        return MBNETTLE_TAG_LENGTH;
    }
    switch (k->algorithm) {
    case HMAC_MD5: hmac_md5_digest(&k->ctx.hmac_md5, tag_len, tag); break;
    case HMAC_SHA1: hmac_sha1_digest(&k->ctx.hmac_sha1, tag_len, tag); break;
    case HMAC_SHA256: hmac_sha256_digest(&k->ctx.hmac_sha256, tag_len, tag); break;
    case HMAC_SHA224: hmac_sha224_digest(&k->ctx.hmac_sha224, tag_len, tag); break;
    case HMAC_SHA384: hmac_sha384_digest(&k->ctx.hmac_sha384, tag_len, tag); break;
    case HMAC_SHA512: hmac_sha512_digest(&k->ctx.hmac_sha512, tag_len, tag); break;
    case HMAC_SHA512_224:
    case HMAC_SHA512_256: HMAC_DIGEST(&k->ctx.hmac_sha512_t, k->hash, tag_len, tag); break;
    case HMAC_SHA3_224: HMAC_DIGEST(&k->ctx.hmac_sha3_224, k->hash, tag_len, tag); break;
    case HMAC_SHA3_384: HMAC_DIGEST(&k->ctx.hmac_sha3_384, k->hash, tag_len, tag); break;
    case HMAC_SHA3_512: HMAC_DIGEST(&k->ctx.hmac_sha3_512, k->hash, tag_len, tag); break;
    case CMAC_AES128: cmac_aes128_digest(&k->ctx.cmac_aes128, tag_len, tag); break;
    case CMAC_AES192: CMAC128_DIGEST(&k->ctx.cmac_aes192, aes192_encrypt, tag_len, tag); break;
    case CMAC_AES256: cmac_aes256_digest(&k->ctx.cmac_aes256, tag_len, tag); break;
    case GMAC_AES128:
    case GMAC_AES192:
    case GMAC_AES256:
        if (k->aad_fill > 0) {
            gcm_aad(k, k->aad_fill, k->aad_block);
            k->aad_fill = 0;
        }
        switch (k->algorithm) {
        case GMAC_AES192: gcm_aes192_digest(&k->ctx.gcm_aes192, tag_len, tag); break;
        case GMAC_AES256: gcm_aes256_digest(&k->ctx.gcm_aes256, tag_len, tag); break;
        default: gcm_aes128_digest(&k->ctx.gcm_aes128, tag_len, tag); break;
        }
        break;
    case UMAC32: umac32_digest(&k->ctx.umac32, tag_len, tag); break;
    case UMAC64: umac64_digest(&k->ctx.umac64, tag_len, tag); break;
    case UMAC96: umac96_digest(&k->ctx.umac96, tag_len, tag); break;
    case UMAC128: umac128_digest(&k->ctx.umac128, tag_len, tag); break;
    case POLY1305_AES: poly1305_aes_digest(&k->ctx.poly1305_aes, tag_len, tag); break;
    }
    return MBNETTLE_OK;
}

/* One message, whole. */
static int tag(void *handle, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
               uint8_t *tag, size_t tag_len) {
    struct keyed *k = handle;
    int status = begin(handle, nonce, nonce_len);
    if (status != MBNETTLE_OK) {
        return status;
    }
    if (is_gmac(k)) {
        /* The whole message in one (hence last) call: no gathering. */
        gcm_aad(k, len, msg);
    } else {
        update(handle, msg, len);
    }
    return finish(handle, tag, tag_len);
}

/* The shim's statuses in words. */
static void reason(const void *handle, int code, char *out, size_t out_len) {
    const char *what;
    (void)handle;
    switch (code) {
    case MBNETTLE_OK: what = "ok"; break;
    case MBNETTLE_UNKNOWN_ALGORITHM: what = "algorithm not implemented by the shim"; break;
    case MBNETTLE_KEY_LENGTH: what = "key length not accepted by Nettle"; break;
    case MBNETTLE_TAG_LENGTH: what = "tag length differs from Nettle's"; break;
    case MBNETTLE_NONCE_LENGTH: what = "nonce length not accepted by Nettle"; break;
    case MBNETTLE_NO_MEMORY: what = "out of memory"; break;
    default: what = "unknown shim status"; break;
    }
    snprintf(out, out_len, "%s", what);
}

/* The library's version at run time: "version=Nettle 3.8". */
static void describe(char *out, size_t out_len) {
    snprintf(out, out_len, "version=Nettle %d.%d\n", nettle_version_major(), nettle_version_minor());
}

const macbench_shim macbench_shim_nettle = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "nettle",
    .create = create,
    .destroy = destroy,
    .tag = tag,
    .begin = begin,
    .update = update,
    .finish = finish,
    .reason = reason,
    .describe = describe,
};
