/* gcrypt_shim.c - libgcrypt's MACs behind macbench's one shim table (csrc/macbench_shim.h).
 *
 * Why libgcrypt: it is the crypto library of GnuPG, systemd and cryptsetup, and its one MAC API
 * (gcry_mac_*) offers HMAC over MD5, SHA-1, SHA-2 (with SHA-512/224 and /256) and SHA-3, CMAC over
 * AES, Twofish and Serpent (with Crypto++ the only second source for the paper's Twofish and Serpent
 * rows), GMAC over AES, Poly1305 and Poly1305-AES: every one of them is the library's code.
 *
 * Key setup happens once in `create` (gcry_mac_open + gcry_mac_setkey: the HMAC ipad/opad states,
 * the cipher key schedule and CMAC subkeys, the GHASH table). Per message: gcry_mac_reset, which puts
 * the handle back in its keyed state without redoing key setup (HMAC restores the saved ipad state,
 * CMAC clears its chaining value, Poly1305 re-derives r and s from the stored key), the nonce where the
 * construction takes one (gcry_mac_setiv: GMAC's IV, Poly1305-AES's nonce), gcry_mac_write and
 * gcry_mac_read. Nothing allocates per message.
 *
 * Tags: gcry_mac_read is asked for the full tag and the prefix copied, because GCM's gettag takes
 * only the tag lengths SP 800-38D allows (16, 15 … 12, 8, 4 bytes).
 *
 * Statuses are libgpg-error codes (gpg_err_code_t); `reason` is gcry_strerror's text.
 *
 * libgcrypt picks its code paths (AES-NI, PCLMUL, SHA-NI, SSSE3, AVX/AVX2 …) from its hardware
 * feature detection when it initialises (gcry_check_version); `describe` records the list it uses
 * (the `hwflist:` line of GCRYCTL_PRINT_CONFIG). `software_only` is its run-time switch: before that
 * initialisation, GCRYCTL_DISABLE_HWF for every extension beyond the architecture's baseline (see
 * SOFTWARE_ONLY_OFF), so the `sw` child runs libgcrypt's portable and SSSE3/NEON code.
 *
 * Built by build.rs with the `cc` crate only when libgcrypt is found (cfg `have_gcrypt`).
 */

/* open_memstream */
#define _POSIX_C_SOURCE 200809L
#include <gcrypt.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macbench_shim.h"

/* The oldest libgcrypt with every MAC registered here (HMAC-SHA-512/224 and /256 came in 1.9). */
#define GCRYPT_SHIM_MIN_VERSION "1.9.0"

/* What a construction takes per message besides the data. */
enum nonce_kind { NO_NONCE, ANY_NONCE, FIXED_NONCE_16 };

struct row {
    const char *name;
    int algo;
    /* 0: any key length (HMAC); else the one length. */
    size_t key_len;
    size_t tag_len;
    enum nonce_kind nonce;
};

static const struct row ROWS[] = {
    {"hmac-md5", GCRY_MAC_HMAC_MD5, 0, 16, NO_NONCE},
    {"hmac-sha1", GCRY_MAC_HMAC_SHA1, 0, 20, NO_NONCE},
    {"hmac-sha224", GCRY_MAC_HMAC_SHA224, 0, 28, NO_NONCE},
    {"hmac-sha256", GCRY_MAC_HMAC_SHA256, 0, 32, NO_NONCE},
    {"hmac-sha384", GCRY_MAC_HMAC_SHA384, 0, 48, NO_NONCE},
    {"hmac-sha512", GCRY_MAC_HMAC_SHA512, 0, 64, NO_NONCE},
    {"hmac-sha512-224", GCRY_MAC_HMAC_SHA512_224, 0, 28, NO_NONCE},
    {"hmac-sha512-256", GCRY_MAC_HMAC_SHA512_256, 0, 32, NO_NONCE},
    {"hmac-sha3-224", GCRY_MAC_HMAC_SHA3_224, 0, 28, NO_NONCE},
    {"hmac-sha3-256", GCRY_MAC_HMAC_SHA3_256, 0, 32, NO_NONCE},
    {"hmac-sha3-384", GCRY_MAC_HMAC_SHA3_384, 0, 48, NO_NONCE},
    {"hmac-sha3-512", GCRY_MAC_HMAC_SHA3_512, 0, 64, NO_NONCE},
    /* CMAC-AES: the key length picks AES-128, -192 or -256. */
    {"cmac-aes128", GCRY_MAC_CMAC_AES, 16, 16, NO_NONCE},
    {"cmac-aes192", GCRY_MAC_CMAC_AES, 24, 16, NO_NONCE},
    {"cmac-aes256", GCRY_MAC_CMAC_AES, 32, 16, NO_NONCE},
    {"cmac-twofish", GCRY_MAC_CMAC_TWOFISH, 16, 16, NO_NONCE},
    {"cmac-serpent", GCRY_MAC_CMAC_SERPENT, 16, 16, NO_NONCE},
    {"gmac-aes128", GCRY_MAC_GMAC_AES, 16, 16, ANY_NONCE},
    {"gmac-aes192", GCRY_MAC_GMAC_AES, 24, 16, ANY_NONCE},
    {"gmac-aes256", GCRY_MAC_GMAC_AES, 32, 16, ANY_NONCE},
    {"poly1305", GCRY_MAC_POLY1305, 32, 16, NO_NONCE},
    /* Key = AES-128 key k || r, nonce 16 bytes: Bernstein's Poly1305-AES, as the registry defines it. */
    {"poly1305-aes", GCRY_MAC_POLY1305_AES, 32, 16, FIXED_NONCE_16},
};

struct keyed {
    gcry_mac_hd_t hd;
    const struct row *row;
};

/* libgcrypt must be initialised once per process before any other call (its manual, "Initializing
 * the library"); gcry_check_version does it and selects the code paths. */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static const char *init_version = NULL;

static void init(void) {
    init_version = gcry_check_version(GCRYPT_SHIM_MIN_VERSION);
    if (init_version != NULL) {
        gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    }
}

static int initialised(void) {
    pthread_once(&init_once, init);
    return init_version != NULL;
}

static void reason(const void *ctx, int status, char *out, size_t out_len) {
    (void)ctx;
    snprintf(out, out_len, "libgcrypt: %s", gcry_strerror((gcry_error_t)status));
}

static int create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                  size_t tag_len, void **out, char *why, size_t why_len) {
    const struct row *row = NULL;
    struct keyed *k;
    gcry_error_t err;
    size_t i;

    *out = NULL;
    if (level != 0) {
        snprintf(why, why_len, "%s", MACBENCH_SHIM_NO_LEVELS);
        return GPG_ERR_NOT_SUPPORTED;
    }
    if (!initialised()) {
        snprintf(why, why_len, "libgcrypt older than %s", GCRYPT_SHIM_MIN_VERSION);
        return GPG_ERR_NOT_SUPPORTED;
    }
    for (i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        if (strcmp(ROWS[i].name, algorithm) == 0) {
            row = &ROWS[i];
            break;
        }
    }
    if (row == NULL) {
        snprintf(why, why_len, "algorithm %s not implemented by the shim", algorithm);
        return GPG_ERR_MAC_ALGO;
    }
    if (row->key_len != 0 && key_len != row->key_len) {
        snprintf(why, why_len, "%s takes a %zu-byte key here, not %zu", algorithm, row->key_len,
                 key_len);
        return GPG_ERR_INV_KEYLEN;
    }
    if (tag_len != row->tag_len) {
        snprintf(why, why_len, "%s tags are %zu bytes, not %zu", algorithm, row->tag_len, tag_len);
        return GPG_ERR_INV_LENGTH;
    }
    k = calloc(1, sizeof *k);
    if (k == NULL) {
        snprintf(why, why_len, "out of memory");
        return GPG_ERR_ENOMEM;
    }
    k->row = row;
    err = gcry_mac_open(&k->hd, row->algo, 0, NULL);
    if (err == 0) {
        err = gcry_mac_setkey(k->hd, key, key_len);
    }
    if (err != 0) {
        reason(NULL, (int)gcry_err_code(err), why, why_len);
        if (k->hd != NULL) {
            gcry_mac_close(k->hd);
        }
        free(k);
        return (int)gcry_err_code(err);
    }
    *out = k;
    return 0;
}

static void destroy(void *ctx) {
    struct keyed *k = ctx;
    if (k != NULL) {
        gcry_mac_close(k->hd);
        free(k);
    }
}

/* Back to the keyed state, then the nonce where the construction takes one. */
static int begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    struct keyed *k = ctx;
    gcry_error_t err;
    switch (k->row->nonce) {
    case NO_NONCE:
        if (nonce_len != 0) {
            return GPG_ERR_INV_ARG;
        }
        break;
    case ANY_NONCE:
        if (nonce_len == 0) {
            return GPG_ERR_INV_ARG;
        }
        break;
    case FIXED_NONCE_16:
        if (nonce_len != 16) {
            return GPG_ERR_INV_ARG;
        }
        break;
    }
    /* libgcrypt's GMAC reset drops the IV, so the IV follows it; its Poly1305-AES reset refuses a
     * handle without a nonce (GPG_ERR_INV_STATE) and re-derives the state from r and the pad the
     * nonce set, so the nonce comes first there. */
    if (k->row->nonce == FIXED_NONCE_16) {
        err = gcry_mac_setiv(k->hd, nonce, nonce_len);
        if (err == 0) {
            err = gcry_mac_reset(k->hd);
        }
    } else {
        err = gcry_mac_reset(k->hd);
        if (err == 0 && k->row->nonce == ANY_NONCE) {
            err = gcry_mac_setiv(k->hd, nonce, nonce_len);
        }
    }
    return (int)gcry_err_code(err);
}

static int update(void *ctx, const uint8_t *data, size_t len) {
    struct keyed *k = ctx;
    return (int)gcry_err_code(gcry_mac_write(k->hd, data, len));
}

static int finish(void *ctx, uint8_t *tag, size_t tag_len) {
    struct keyed *k = ctx;
    uint8_t full[64];
    size_t full_len = k->row->tag_len;
    gcry_error_t err;
    if (tag_len == 0 || tag_len > k->row->tag_len) {
        return GPG_ERR_INV_LENGTH;
    }
    err = gcry_mac_read(k->hd, full, &full_len);
    if (err != 0) {
        return (int)gcry_err_code(err);
    }
    if (full_len != k->row->tag_len) {
        return GPG_ERR_INV_LENGTH;
    }
    memcpy(tag, full, tag_len);
    return 0;
}

static int tag(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
               uint8_t *out, size_t tag_len) {
    int status = begin(ctx, nonce, nonce_len);
    if (status == 0) {
        status = update(ctx, msg, len);
    }
    if (status == 0) {
        status = finish(ctx, out, tag_len);
    }
    return status;
}

/* The `hwflist:` line of GCRYCTL_PRINT_CONFIG: the hardware features libgcrypt uses, ':'-separated. */
static void hw_features(char *out, size_t out_len) {
    char *text = NULL;
    size_t size = 0;
    FILE *f;
    const char *line;
    out[0] = '\0';
    f = open_memstream(&text, &size);
    if (f == NULL) {
        return;
    }
    gcry_control(GCRYCTL_PRINT_CONFIG, f);
    fclose(f);
    line = text == NULL ? NULL : strstr(text, "hwflist:");
    if (line != NULL) {
        size_t n;
        line += strlen("hwflist:");
        n = strcspn(line, "\n");
        if (n > 0 && line[n - 1] == ':') {
            n--;
        }
        snprintf(out, out_len, "%.*s", (int)n, line);
    }
    free(text);
}

/* "version=libgcrypt 1.10.1" and "hwf=intel-cpu:intel-aesni:…" (empty: none). */
static void describe(char *out, size_t out_len) {
    char hwf[512];
    if (!initialised()) {
        snprintf(out, out_len, "version=libgcrypt (older than %s)\n", GCRYPT_SHIM_MIN_VERSION);
        return;
    }
    hw_features(hwf, sizeof hwf);
    snprintf(out, out_len, "version=libgcrypt %s\nhwf=%s\n", gcry_check_version(NULL), hwf);
}

/* What `sw` switches off, by libgcrypt's names (hwfeatures.c), as OpenSSL's software-only mask does:
 * AES, carry-less multiply and SHA instructions, AVX and above, BMI2; SSE2/SSSE3/SSE4.1 and NEON, the
 * baselines, stay. Names this libgcrypt does not know are skipped (GCRYCTL_DISABLE_HWF refuses them). */
static const char *const SOFTWARE_ONLY_OFF[] = {
    "intel-pclmul",   "intel-aesni",   "intel-shaext", "intel-avx",  "intel-avx2",
    "intel-fast-vpgather", "intel-vaes-vpclmul", "intel-avx512", "intel-gfni", "intel-bmi2",
    "intel-sha512",   "intel-sm3",     "intel-sm4",    "padlock-aes", "padlock-sha",
    "arm-aes",        "arm-pmull",     "arm-sha1",     "arm-sha2",   "arm-sha3",
    "arm-sha512",     "arm-sm3",       "arm-sm4",      "arm-sve",    "arm-sve2",
    "arm-sveaes",     "arm-svepmull",  "arm-svesha3",  "arm-svesm4",
};

/* Must run before libgcrypt initialises (its manual: "at initialization time; i.e. before calling
 * gcry_check_version"): refused once it has. */
static int software_only(char *why, size_t why_len) {
    size_t i;
    if (init_version != NULL) {
        snprintf(why, why_len, "libgcrypt was initialised before its extensions could be switched off");
        return 1;
    }
    for (i = 0; i < sizeof SOFTWARE_ONLY_OFF / sizeof SOFTWARE_ONLY_OFF[0]; i++) {
        (void)gcry_control(GCRYCTL_DISABLE_HWF, SOFTWARE_ONLY_OFF[i], NULL);
    }
    return 0;
}

const macbench_shim macbench_shim_gcrypt = {
    .abi = MACBENCH_SHIM_ABI,
    .backend = "gcrypt",
    .create = create,
    .destroy = destroy,
    .tag = tag,
    .begin = begin,
    .update = update,
    .finish = finish,
    .reason = reason,
    .describe = describe,
    .software_only = software_only,
};
