/* openssl4_shim.c - a second OpenSSL, built from source, behind macbench's one shim table
 * (csrc/macbench_shim.h).
 *
 * Why: the `openssl` backend times the system's libcrypto (Debian's 3.0). Users ask whether moving to a
 * newer release changes what a MAC costs, small messages above all (OpenSSL 3's per-call overhead).
 * This shim is compiled against the OpenSSL the `openssl-src` crate vendors (4.0 at the time of
 * writing) and linked with its static libcrypto into one object whose only global symbol is
 * `macbench_shim_openssl4`: build.rs makes every other symbol of that copy local, so its
 * `EVP_MAC_init`, its `OPENSSL_ia32cap_P` and the system libcrypto's never meet, in one process.
 *
 * Every entry makes the same library calls as the `openssl` backend (src/mac/openssl.rs), so the two
 * rows differ only by the library's version:
 * - HMAC, CMAC: one EVP_MAC_CTX fetched, parameterised and keyed in `create`; per message
 *   EVP_MAC_init with a NULL key (the kept key), EVP_MAC_update, EVP_MAC_final.
 * - Poly1305 (a one-time key): EVP_MAC_init with the key on every message, as that backend does.
 * - GMAC: the AES-GCM EVP_CIPHER keyed once; per message the IV (EVP_CTRL_GCM_SET_IVLEN only when its
 *   length changes), the message as additional data, EVP_EncryptFinal_ex and EVP_CTRL_GCM_GET_TAG,
 *   as IPsec and TLS code computes it.
 *
 * Statuses: 1 is "the library refused" (its error queue in words via `reason`), the rest the shim's.
 *
 * Built by build.rs only with the cargo feature `openssl4` (cfg `have_openssl4`).
 */

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macbench_shim.h"

#define OSSL4_LIBRARY 1
#define OSSL4_UNKNOWN_ALGORITHM 2
#define OSSL4_KEY_LENGTH 3
#define OSSL4_TAG_LENGTH 4
#define OSSL4_NONCE 5
#define OSSL4_NO_MEMORY 6

enum family { FAMILY_EVP_MAC, FAMILY_GCM };

struct row {
    const char *name;
    enum family family;
    /* EVP_MAC name ("HMAC") or, for GCM, the cipher ("AES-128-GCM"). */
    const char *mac;
    /* The EVP_MAC parameter that chooses the primitive ("digest", "cipher") and its value. */
    const char *param;
    const char *value;
    /* 0: any key length. */
    size_t key_len;
    size_t tag_len;
    /* Keyed afresh for every message (Poly1305's one-time key). */
    int rekey;
};

static const struct row ROWS[] = {
    {"hmac-md5", FAMILY_EVP_MAC, "HMAC", "digest", "MD5", 0, 16, 0},
    {"hmac-sha1", FAMILY_EVP_MAC, "HMAC", "digest", "SHA1", 0, 20, 0},
    {"hmac-sha224", FAMILY_EVP_MAC, "HMAC", "digest", "SHA2-224", 0, 28, 0},
    {"hmac-sha256", FAMILY_EVP_MAC, "HMAC", "digest", "SHA2-256", 0, 32, 0},
    {"hmac-sha384", FAMILY_EVP_MAC, "HMAC", "digest", "SHA2-384", 0, 48, 0},
    {"hmac-sha512", FAMILY_EVP_MAC, "HMAC", "digest", "SHA2-512", 0, 64, 0},
    {"hmac-sha512-224", FAMILY_EVP_MAC, "HMAC", "digest", "SHA2-512/224", 0, 28, 0},
    {"hmac-sha512-256", FAMILY_EVP_MAC, "HMAC", "digest", "SHA2-512/256", 0, 32, 0},
    {"hmac-sha3-224", FAMILY_EVP_MAC, "HMAC", "digest", "SHA3-224", 0, 28, 0},
    {"hmac-sha3-256", FAMILY_EVP_MAC, "HMAC", "digest", "SHA3-256", 0, 32, 0},
    {"hmac-sha3-384", FAMILY_EVP_MAC, "HMAC", "digest", "SHA3-384", 0, 48, 0},
    {"hmac-sha3-512", FAMILY_EVP_MAC, "HMAC", "digest", "SHA3-512", 0, 64, 0},
    {"cmac-aes128", FAMILY_EVP_MAC, "CMAC", "cipher", "AES-128-CBC", 16, 16, 0},
    {"cmac-aes192", FAMILY_EVP_MAC, "CMAC", "cipher", "AES-192-CBC", 24, 16, 0},
    {"cmac-aes256", FAMILY_EVP_MAC, "CMAC", "cipher", "AES-256-CBC", 32, 16, 0},
    {"gmac-aes128", FAMILY_GCM, "AES-128-GCM", NULL, NULL, 16, 16, 0},
    {"gmac-aes192", FAMILY_GCM, "AES-192-GCM", NULL, NULL, 24, 16, 0},
    {"gmac-aes256", FAMILY_GCM, "AES-256-GCM", NULL, NULL, 32, 16, 0},
    {"poly1305", FAMILY_EVP_MAC, "POLY1305", NULL, NULL, 32, 16, 1},
};

struct keyed {
    const struct row *row;
    EVP_MAC_CTX *mac;
    EVP_CIPHER_CTX *gcm;
    /* The IV length the GCM context was last told (0: unknown). */
    size_t iv_len;
    /* Poly1305's key, given again on every message. */
    unsigned char key[32];
};

/* The library's reason for the last refusal on this thread, its error queue drained. */
static void library_reason(char *out, size_t out_len) {
    unsigned long code = ERR_get_error();
    unsigned long next;
    if (code == 0) {
        snprintf(out, out_len, "OpenSSL %s: refused without a reason", OPENSSL_VERSION_STR);
        return;
    }
    while ((next = ERR_get_error()) != 0) {
        code = next;
    }
    ERR_error_string_n(code, out, out_len);
}

static void reason(const void *ctx, int status, char *out, size_t out_len) {
    const char *what;
    (void)ctx;
    switch (status) {
    case 0: what = "ok"; break;
    case OSSL4_LIBRARY: library_reason(out, out_len); return;
    case OSSL4_UNKNOWN_ALGORITHM: what = "algorithm not implemented by the shim"; break;
    case OSSL4_KEY_LENGTH: what = "key length not accepted for this MAC"; break;
    case OSSL4_TAG_LENGTH: what = "tag length differs from the MAC's"; break;
    case OSSL4_NONCE: what = "nonce not accepted for this MAC (GMAC takes a non-empty IV, the others none)"; break;
    case OSSL4_NO_MEMORY: what = "out of memory"; break;
    default: what = "unknown shim status"; break;
    }
    snprintf(out, out_len, "%s", what);
}

static int key_mac(struct keyed *k, const uint8_t *key, size_t key_len) {
    const struct row *row = k->row;
    EVP_MAC *mac = EVP_MAC_fetch(NULL, row->mac, NULL);
    OSSL_PARAM params[2];
    if (mac == NULL) {
        return OSSL4_LIBRARY;
    }
    k->mac = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac);
    if (k->mac == NULL) {
        return OSSL4_LIBRARY;
    }
    params[0] = OSSL_PARAM_construct_end();
    if (row->param != NULL) {
        params[0] = OSSL_PARAM_construct_utf8_string(row->param, (char *)row->value, 0);
        params[1] = OSSL_PARAM_construct_end();
    }
    if (EVP_MAC_CTX_set_params(k->mac, params) != 1 ||
        EVP_MAC_init(k->mac, key, key_len, NULL) != 1) {
        return OSSL4_LIBRARY;
    }
    if (EVP_MAC_CTX_get_mac_size(k->mac) != row->tag_len) {
        return OSSL4_TAG_LENGTH;
    }
    if (row->rekey) {
        memcpy(k->key, key, key_len);
    }
    return 0;
}

static int key_gcm(struct keyed *k, const uint8_t *key) {
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, k->row->mac, NULL);
    int ok;
    if (cipher == NULL) {
        return OSSL4_LIBRARY;
    }
    k->gcm = EVP_CIPHER_CTX_new();
    ok = k->gcm != NULL && EVP_EncryptInit_ex(k->gcm, cipher, NULL, key, NULL) == 1;
    EVP_CIPHER_free(cipher);
    /* A fresh GCM context expects a 12-byte IV. */
    k->iv_len = 12;
    return ok ? 0 : OSSL4_LIBRARY;
}

static void destroy(void *ctx) {
    struct keyed *k = ctx;
    if (k == NULL) {
        return;
    }
    EVP_MAC_CTX_free(k->mac);
    EVP_CIPHER_CTX_free(k->gcm);
    OPENSSL_cleanse(k->key, sizeof k->key);
    free(k);
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
        return OSSL4_UNKNOWN_ALGORITHM;
    }
    for (i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        if (strcmp(ROWS[i].name, algorithm) == 0) {
            row = &ROWS[i];
            break;
        }
    }
    status = row == NULL                                       ? OSSL4_UNKNOWN_ALGORITHM
             : row->key_len != 0 && key_len != row->key_len ? OSSL4_KEY_LENGTH
             : tag_len != row->tag_len                       ? OSSL4_TAG_LENGTH
                                                             : 0;
    if (status == 0 && (k = calloc(1, sizeof *k)) == NULL) {
        status = OSSL4_NO_MEMORY;
    }
    if (status != 0) {
        reason(NULL, status, why, why_len);
        return status;
    }
    k->row = row;
    status = row->family == FAMILY_GCM ? key_gcm(k, key) : key_mac(k, key, key_len);
    if (status != 0) {
        reason(NULL, status, why, why_len);
        destroy(k);
        return status;
    }
    *out = k;
    return 0;
}

static int begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    struct keyed *k = ctx;
    if (k->row->family == FAMILY_GCM) {
        if (nonce_len == 0 || nonce_len > 0x7fffffff) {
            return OSSL4_NONCE;
        }
        if (nonce_len != k->iv_len) {
            int ok = EVP_CIPHER_CTX_ctrl(k->gcm, EVP_CTRL_GCM_SET_IVLEN, (int)nonce_len, NULL) == 1;
            /* Whatever happened, the IV length is unknown until a later call succeeds. */
            k->iv_len = ok ? nonce_len : 0;
            if (!ok) {
                return OSSL4_LIBRARY;
            }
        }
        return EVP_EncryptInit_ex(k->gcm, NULL, NULL, NULL, nonce) == 1 ? 0 : OSSL4_LIBRARY;
    }
    if (nonce_len != 0) {
        return OSSL4_NONCE;
    }
    return EVP_MAC_init(k->mac, k->row->rekey ? k->key : NULL, k->row->rekey ? k->row->key_len : 0,
                        NULL) == 1
               ? 0
               : OSSL4_LIBRARY;
}

static int update(void *ctx, const uint8_t *data, size_t len) {
    struct keyed *k = ctx;
    if (k->row->family == FAMILY_GCM) {
        int outl = 0;
        /* Additional data, in pieces that fit an int. */
        while (len > 0) {
            int piece = len > 0x40000000 ? 0x40000000 : (int)len;
            if (EVP_EncryptUpdate(k->gcm, NULL, &outl, data, piece) != 1) {
                return OSSL4_LIBRARY;
            }
            data += piece;
            len -= (size_t)piece;
        }
        return 0;
    }
    return EVP_MAC_update(k->mac, data, len) == 1 ? 0 : OSSL4_LIBRARY;
}

static int finish(void *ctx, uint8_t *tag, size_t tag_len) {
    struct keyed *k = ctx;
    unsigned char full[EVP_MAX_MD_SIZE];
    size_t written = 0;
    if (tag_len == 0 || tag_len > k->row->tag_len) {
        return OSSL4_TAG_LENGTH;
    }
    if (k->row->family == FAMILY_GCM) {
        unsigned char sink[16];
        int outl = 0;
        return EVP_EncryptFinal_ex(k->gcm, sink, &outl) == 1 &&
                       EVP_CIPHER_CTX_ctrl(k->gcm, EVP_CTRL_GCM_GET_TAG, (int)tag_len, tag) == 1
                   ? 0
                   : OSSL4_LIBRARY;
    }
    if (tag_len == k->row->tag_len) {
        return EVP_MAC_final(k->mac, tag, &written, tag_len) == 1 && written == tag_len
                   ? 0
                   : OSSL4_LIBRARY;
    }
    if (EVP_MAC_final(k->mac, full, &written, sizeof full) != 1 || written != k->row->tag_len) {
        return OSSL4_LIBRARY;
    }
    memcpy(tag, full, tag_len);
    return 0;
}

/* One message: the same three calls as the `openssl` backend's per-message path. */
static int tag(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
               uint8_t *out, size_t tag_len) {
    int status = begin(ctx, nonce, nonce_len);
    if (status == 0 && len > 0) {
        status = update(ctx, msg, len);
    }
    if (status == 0) {
        status = finish(ctx, out, tag_len);
    }
    return status;
}

/* "version=OpenSSL 4.0.3 …", then the capability word(s) this copy of libcrypto uses
 * (`OPENSSL_ia32cap=0x…:0x… env:…` or `OPENSSL_armcap=0x…`), as the system one reports its own. */
static void describe(char *out, size_t out_len) {
    const char *cpu = OPENSSL_info(OPENSSL_INFO_CPU_SETTINGS);
    snprintf(out, out_len, "version=%s\ncpu=%s\n", OpenSSL_version(OPENSSL_VERSION),
             cpu != NULL ? cpu : "");
}

const macbench_shim macbench_shim_openssl4 = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "openssl4",
    .create = create,
    .destroy = destroy,
    .tag = tag,
    .begin = begin,
    .update = update,
    .finish = finish,
    .reason = reason,
    .describe = describe,
};
