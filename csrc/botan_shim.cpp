// botan_shim.cpp - macbench's `botan` backend: Botan 2 (Debian's libbotan-2-dev) through the one table
// of csrc/macbench_shim.h.
//
// Why a shim: Botan is a C++ library; Rust calls a C ABI. Each context is one
// Botan::MessageAuthenticationCode made by name (the names `botan speed` takes, so `macbench compare
// --against botan` sets the very objects side by side) and keyed once in `create`. Per message Botan's
// own reset does the rest for HMAC, CMAC and CBC-MAC, which return to their keyed state in `final`.
// Botan 2 clears the key of Poly1305 (a one-time key), GMAC and SipHash in `final`, so for those the
// kept key is set again before each message (GMAC: the AES key schedule and GHASH's H, per message:
// that is the library as shipped, and what this backend measures), then GMAC takes the message's
// nonce in `start`. CBC-MAC of the empty message is macbench's one all-zero block, which Botan
// (which encrypts no block then) is fed explicitly. Nothing here allocates per message except a
// truncated tag's copy on the stack. No C++ exception crosses the C boundary: every entry point
// catches and returns a status with the library's words kept on the context.
//
// Built by build.rs with the `cc` crate only when Botan 2 is found (cfg `have_botan`).

#include <botan/mac.h>
#include <botan/version.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "macbench_shim.h"

namespace {

void set_text(char *out, size_t out_len, const char *what) {
    if (out != nullptr && out_len > 0) {
        std::snprintf(out, out_len, "%s", what);
    }
}

// The registry's name -> Botan's name (as `botan speed` and MessageAuthenticationCode::create take it).
struct Name {
    const char *ours;
    const char *botan;
};

const Name NAMES[] = {
    {"hmac-md5", "HMAC(MD5)"},
    {"hmac-sha1", "HMAC(SHA-1)"},
    {"hmac-sha224", "HMAC(SHA-224)"},
    {"hmac-sha256", "HMAC(SHA-256)"},
    {"hmac-sha384", "HMAC(SHA-384)"},
    {"hmac-sha512", "HMAC(SHA-512)"},
    {"hmac-sha512-256", "HMAC(SHA-512-256)"},
    {"hmac-sha3-224", "HMAC(SHA-3(224))"},
    {"hmac-sha3-256", "HMAC(SHA-3(256))"},
    {"hmac-sha3-384", "HMAC(SHA-3(384))"},
    {"hmac-sha3-512", "HMAC(SHA-3(512))"},
    {"cmac-aes128", "CMAC(AES-128)"},
    {"cmac-aes192", "CMAC(AES-192)"},
    {"cmac-aes256", "CMAC(AES-256)"},
    {"cmac-twofish", "CMAC(Twofish)"},
    {"cmac-serpent", "CMAC(Serpent)"},
    {"cbcmac-aes128", "CBC-MAC(AES-128)"},
    {"gmac-aes128", "GMAC(AES-128)"},
    {"gmac-aes192", "GMAC(AES-192)"},
    {"gmac-aes256", "GMAC(AES-256)"},
    {"poly1305", "Poly1305"},
    {"siphash-2-4", "SipHash(2,4)"},
};

struct Keyed {
    std::unique_ptr<Botan::MessageAuthenticationCode> mac;
    // Poly1305, GMAC, SipHash: the key, set again before each message (Botan 2 clears it in final).
    std::vector<uint8_t> rekey;
    // CBC-MAC: the empty message is one zero block; counts what a message was fed.
    bool cbc_empty_block = false;
    size_t fed = 0;
    std::string last_error;

    void begin(const uint8_t *nonce, size_t nonce_len) {
        if (!rekey.empty()) {
            mac->set_key(rekey.data(), rekey.size());
        }
        fed = 0;
        // Botan's start(nonce) is a no-op for the MACs that take none and refuses a nonce there.
        if (nonce_len > 0) {
            mac->start(nonce, nonce_len);
        }
    }
    void update(const uint8_t *data, size_t len) {
        fed += len;
        mac->update(data, len);
    }
    void finish(uint8_t *tag, size_t tag_len) {
        if (cbc_empty_block && fed == 0) {
            static const uint8_t zero_block[16] = {0};
            mac->update(zero_block, sizeof zero_block);
        }
        const size_t full = mac->output_length();
        if (tag_len == full) {
            mac->final(tag);
            return;
        }
        uint8_t scratch[64];
        if (full > sizeof scratch) {
            throw std::length_error("tag longer than the shim's buffer");
        }
        mac->final(scratch);
        std::memcpy(tag, scratch, tag_len < full ? tag_len : full);
    }
};

// Run `call` on the context; an exception becomes status 1 with Botan's words kept on the context.
template <class F> int guarded(void *ctx, F call) {
    Keyed *k = static_cast<Keyed *>(ctx);
    try {
        call(k);
        return 0;
    } catch (const std::exception &e) {
        k->last_error = e.what();
    } catch (...) {
        k->last_error = "unknown C++ exception";
    }
    return 1;
}

} // namespace

extern "C" {

static int shim_create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                       size_t tag_len, void **out, char *why, size_t why_len) {
    *out = nullptr;
    if (level != 0) {
        set_text(why, why_len, MACBENCH_SHIM_NO_LEVELS);
        return 1;
    }
    const char *botan_name = nullptr;
    for (const Name &n : NAMES) {
        if (std::strcmp(n.ours, algorithm) == 0) {
            botan_name = n.botan;
        }
    }
    if (botan_name == nullptr) {
        set_text(why, why_len, "algorithm not implemented by the shim");
        return 1;
    }
    try {
        std::unique_ptr<Keyed> k(new Keyed);
        k->mac = Botan::MessageAuthenticationCode::create(botan_name);
        if (!k->mac) {
            const std::string what = std::string("this Botan build has no ") + botan_name;
            set_text(why, why_len, what.c_str());
            return 1;
        }
        if (k->mac->output_length() != tag_len) {
            char text[96];
            std::snprintf(text, sizeof text, "Botan's %s produces %zu-byte tags, expected %zu",
                          botan_name, k->mac->output_length(), tag_len);
            set_text(why, why_len, text);
            return 1;
        }
        k->mac->set_key(key, key_len);
        // Botan 2 clears these keys in final (Poly1305's one-time key; GMAC and SipHash by their
        // final_result): the known answers, run twice on one key, refuse a second message otherwise.
        if (std::strcmp(algorithm, "poly1305") == 0 || std::strcmp(algorithm, "siphash-2-4") == 0 ||
            std::strncmp(algorithm, "gmac-", 5) == 0) {
            k->rekey.assign(key, key + key_len);
        }
        k->cbc_empty_block = std::strcmp(algorithm, "cbcmac-aes128") == 0;
        *out = k.release();
        return 0;
    } catch (const std::exception &e) {
        set_text(why, why_len, e.what());
    } catch (...) {
        set_text(why, why_len, "unknown C++ exception");
    }
    return 1;
}

static void shim_destroy(void *ctx) { delete static_cast<Keyed *>(ctx); }

static int shim_tag(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg,
                    size_t len, uint8_t *tag, size_t tag_len) {
    return guarded(ctx, [&](Keyed *k) {
        k->begin(nonce, nonce_len);
        k->update(msg, len);
        k->finish(tag, tag_len);
    });
}

static int shim_begin(void *ctx, const uint8_t *nonce, size_t nonce_len) {
    return guarded(ctx, [&](Keyed *k) { k->begin(nonce, nonce_len); });
}

static int shim_update(void *ctx, const uint8_t *data, size_t len) {
    return guarded(ctx, [&](Keyed *k) { k->update(data, len); });
}

// Also called after a refused update (the table's contract): final returns Botan's object to its
// keyed state; a zero-length tag asks for nothing to be written.
static int shim_finish(void *ctx, uint8_t *tag, size_t tag_len) {
    return guarded(ctx, [&](Keyed *k) {
        if (tag_len == 0) {
            uint8_t scratch[64];
            k->finish(scratch, k->mac->output_length());
            return;
        }
        k->finish(tag, tag_len);
    });
}

static void shim_reason(const void *ctx, int status, char *out, size_t out_len) {
    (void)status;
    const std::string what = "Botan: " + static_cast<const Keyed *>(ctx)->last_error;
    set_text(out, out_len, what.c_str());
}

// "version=Botan 2.19.3" (the library loaded at run time). Botan picks its code paths (AES-NI,
// SHA-NI, CLMUL) per call from its CPUID; the header that reports them is internal from Botan 3 on.
static void shim_describe(char *out, size_t out_len) {
    std::snprintf(out, out_len, "version=Botan %u.%u.%u\n", Botan::version_major(),
                  Botan::version_minor(), Botan::version_patch());
}

// `extern`: a const object at namespace scope would otherwise have internal linkage in C++.
extern const macbench_shim macbench_shim_botan = {
    MACBENCH_SHIM_ABI, "botan",     shim_create, shim_destroy,  shim_tag, shim_begin,
    shim_update,       shim_finish, nullptr,     shim_reason,   shim_describe,
    nullptr,           nullptr,     nullptr,
    /* software_only: Botan 2 has no run-time switch to name here */
    nullptr,
    /* max_batch (the default), tag_prebuilt, counters: no descriptors, no device; rekey: a new
     * context per key */
    0, nullptr, nullptr, nullptr,
};

} // extern "C"
