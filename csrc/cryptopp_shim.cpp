// cryptopp_shim.cpp - a small extern "C" face on Crypto++ for macbench's `cryptopp` backend.
//
// Why a shim: Crypto++ is a C++ template library; Rust can only call a C ABI. Each keyed object is built
// once (key schedule, CMAC subkeys, VMAC/GHASH tables), then per message the Rust side calls tag (one
// shot) or begin/update/finish (streaming, for the chunked self-test) through the `macbench_shim_cryptopp`
// table of csrc/macbench_shim.h. The process switch's own entry points (mbcpp_features,
// mbcpp_clear_features, mbcpp_provider) stay outside the table: only this backend has them. Nothing here
// allocates per message. No C++ exception crosses the C boundary: every entry point catches and returns a
// status (0 = ok) with the reason copied into a caller-supplied buffer.
//
// Built by build.rs with the `cc` crate only when Crypto++ is found (cfg `have_cryptopp`).

// MD5 lives in Crypto++'s `Weak` namespace; HMAC-MD5 is one of the seed paper's functions.
#define CRYPTOPP_ENABLE_NAMESPACE_WEAK 1

#include <cryptopp/aes.h>
#include <cryptopp/blake2.h>
#include <cryptopp/cbcmac.h>
#include <cryptopp/cmac.h>
#include <cryptopp/config_ver.h>
#include <cryptopp/cpu.h>
#include <cryptopp/cryptlib.h>
#include <cryptopp/gcm.h>
#include <cryptopp/hmac.h>
#include <cryptopp/md5.h>
#include <cryptopp/poly1305.h>
#include <cryptopp/rc6.h>
#include <cryptopp/serpent.h>
#include <cryptopp/sha.h>
#include <cryptopp/sha3.h>
#include <cryptopp/siphash.h>
#include <cryptopp/twofish.h>
#include <cryptopp/vmac.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "macbench_shim.h"

namespace {

using CryptoPP::byte;

void set_error(char *err, size_t err_len, const char *what) {
    if (err != nullptr && err_len > 0) {
        std::snprintf(err, err_len, "%s", what);
    }
}

// One keyed object. The common case is a MessageAuthenticationCode (HMAC, CMAC, CBC-MAC, VMAC,
// Poly1305-TLS, SipHash, keyed BLAKE2); GMAC is a GCM encryption object fed only additional data.
class Keyed {
  public:
    virtual ~Keyed() = default;
    // Start a message: set the nonce where the construction takes one, otherwise nothing (Crypto++
    // restarts a MAC by itself after each Final).
    virtual void begin(const byte *nonce, size_t nonce_len) = 0;
    virtual void update(const byte *data, size_t len) = 0;
    virtual void final(byte *tag, size_t tag_len) = 0;
    virtual unsigned int digest_size() const = 0;
    // What the library said when it last refused a call on this object (mbcpp_last_error).
    std::string last_error;
};

enum class Nonce { None, Resync };

class MacKeyed final : public Keyed {
  public:
    MacKeyed(CryptoPP::MessageAuthenticationCode *mac, Nonce nonce, bool cbc_empty_block)
        : mac_(mac), nonce_(nonce), cbc_empty_block_(cbc_empty_block) {}

    void begin(const byte *nonce, size_t nonce_len) override {
        fed_ = 0;
        if (nonce_ == Nonce::Resync) {
            // VMAC: the pad for this nonce; the key-dependent tables stay.
            mac_->Resynchronize(nonce, static_cast<int>(nonce_len));
        }
    }
    void update(const byte *data, size_t len) override {
        fed_ += len;
        mac_->Update(data, len);
    }
    void final(byte *tag, size_t tag_len) override {
        if (cbc_empty_block_ && fed_ == 0) {
            // macbench's CBC-MAC zero-pads the empty message to one zero block. Crypto++'s CBC_MAC pads
            // implicitly in the same way (a partial block is XORed into the zero-initialised register)
            // except for the empty message, where it returns the register without encrypting.
            static const byte zero_block[16] = {0};
            mac_->Update(zero_block, sizeof zero_block);
        }
        mac_->TruncatedFinal(tag, tag_len);
    }
    unsigned int digest_size() const override { return mac_->DigestSize(); }

  private:
    std::unique_ptr<CryptoPP::MessageAuthenticationCode> mac_;
    Nonce nonce_;
    bool cbc_empty_block_;
    size_t fed_ = 0;
};

// GMAC: AES-GCM with empty plaintext; the message is the additional authenticated data.
class GmacKeyed final : public Keyed {
  public:
    GmacKeyed(const byte *key, size_t key_len) {
        const byte zero_iv[12] = {0};
        gcm_.SetKeyWithIV(key, key_len, zero_iv, sizeof zero_iv);
    }
    void begin(const byte *nonce, size_t nonce_len) override {
        gcm_.Resynchronize(nonce, static_cast<int>(nonce_len));
    }
    // Before any plaintext, Update() on an authenticated cipher absorbs additional data.
    void update(const byte *data, size_t len) override { gcm_.Update(data, len); }
    void final(byte *tag, size_t tag_len) override { gcm_.TruncatedFinal(tag, tag_len); }
    unsigned int digest_size() const override { return gcm_.DigestSize(); }

  private:
    CryptoPP::GCM<CryptoPP::AES>::Encryption gcm_;
};

template <class M> Keyed *keyed(const byte *key, size_t key_len, bool cbc = false) {
    return new MacKeyed(new M(key, key_len), Nonce::None, cbc);
}

// VMAC with a correct pad cache. Crypto++ 8.7's VMAC_Base::Resynchronize (64-bit tags) re-checks its
// cached pad only when the new nonce's last byte equals the cached one up to the low bit; when the last
// bytes differ otherwise it keeps m_padCached set and reuses the *old* pad, giving wrong tags (the
// published vectors fail after any earlier nonce ending in a different byte; Crypto++'s own tests re-key
// for every vector, so never resynchronise). Clear the flag unless the padded nonce matches the cached
// one except for the low bit, which is the reuse the draft intends; then Resynchronize recomputes.
template <int BITS> class Vmac final : public CryptoPP::VMAC<CryptoPP::AES, BITS> {
  public:
    void Resynchronize(const byte *nonce, int length = -1) override {
        if (BITS == 64 && length > 0) {
            const size_t len = static_cast<size_t>(length);
            const size_t s = this->IVSize();
            const byte *stored = this->m_nonce();
            bool same = len <= s && (stored[s - 1] | 1) == (nonce[len - 1] | 1) &&
                        std::memcmp(stored + s - len, nonce, len - 1) == 0;
            for (size_t i = 0; same && i < s - len; i++) {
                same = stored[i] == 0;
            }
            if (!same) {
                this->m_padCached = false;
            }
        }
        CryptoPP::VMAC<CryptoPP::AES, BITS>::Resynchronize(nonce, length);
    }
};

template <int BITS> Keyed *vmac(const byte *key, size_t key_len, const byte *nonce, size_t nonce_len) {
    auto *mac = new Vmac<BITS>();
    // Key setup with a first nonce; each message then only resynchronises.
    mac->SetKeyWithIV(key, key_len, nonce, nonce_len);
    return new MacKeyed(mac, Nonce::Resync, false);
}

Keyed *make(const std::string &alg, const byte *key, size_t key_len) {
    using namespace CryptoPP;
    // A valid first nonce for key setup (VMAC needs one); the benchmark's nonce replaces it per message.
    const byte first_nonce[8] = {0};
    if (alg == "hmac-md5") return keyed<HMAC<Weak::MD5>>(key, key_len);
    if (alg == "hmac-sha1") return keyed<HMAC<SHA1>>(key, key_len);
    if (alg == "hmac-sha224") return keyed<HMAC<SHA224>>(key, key_len);
    if (alg == "hmac-sha256") return keyed<HMAC<SHA256>>(key, key_len);
    if (alg == "hmac-sha384") return keyed<HMAC<SHA384>>(key, key_len);
    if (alg == "hmac-sha512") return keyed<HMAC<SHA512>>(key, key_len);
    // HMAC over SHA-3 uses the hash's BlockSize(), the sponge rate: 144, 136, 104, 72 bytes.
    if (alg == "hmac-sha3-224") return keyed<HMAC<SHA3_224>>(key, key_len);
    if (alg == "hmac-sha3-256") return keyed<HMAC<SHA3_256>>(key, key_len);
    if (alg == "hmac-sha3-384") return keyed<HMAC<SHA3_384>>(key, key_len);
    if (alg == "hmac-sha3-512") return keyed<HMAC<SHA3_512>>(key, key_len);
    // CMAC<AES> takes the AES key size from the key: 16, 24 or 32 bytes (checked by the registry).
    if (alg == "cmac-aes128" || alg == "cmac-aes192" || alg == "cmac-aes256")
        return keyed<CMAC<AES>>(key, key_len);
    if (alg == "cmac-twofish") return keyed<CMAC<Twofish>>(key, key_len);
    if (alg == "cmac-serpent") return keyed<CMAC<Serpent>>(key, key_len);
    if (alg == "cmac-rc6") return keyed<CMAC<RC6>>(key, key_len);
    if (alg == "cbcmac-aes128") return keyed<CBC_MAC<AES>>(key, key_len, true);
    // GCM<AES> takes the AES key size from the key: 16, 24 or 32 bytes (checked by the registry).
    if (alg == "gmac-aes128" || alg == "gmac-aes192" || alg == "gmac-aes256")
        return new GmacKeyed(key, key_len);
    if (alg == "poly1305") return keyed<Poly1305TLS>(key, key_len);
    if (alg == "siphash-2-4") return keyed<SipHash<2, 4, false>>(key, key_len);
    if (alg == "blake2b-keyed") return keyed<BLAKE2b>(key, key_len);
    if (alg == "blake2s-keyed") return keyed<BLAKE2s>(key, key_len);
    if (alg == "vmac-aes128-64") return vmac<64>(key, key_len, first_nonce, sizeof first_nonce);
    if (alg == "vmac-aes128-128") return vmac<128>(key, key_len, first_nonce, sizeof first_nonce);
    return nullptr;
}

// Every per-message entry point returns 0 on success, else 1 with the library's exception text kept
// on the object for mbcpp_last_error: a refused call never leaves a tag that looks computed.
template <class F> int guarded(void *handle, F call) {
    Keyed *k = static_cast<Keyed *>(handle);
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

// Key setup. Returns 0 and a handle in *out, or nonzero with the reason in err.
static int mbcpp_new(const char *algorithm, const uint8_t *key, size_t key_len, size_t tag_len, void **out,
              char *err, size_t err_len) {
    *out = nullptr;
    try {
        Keyed *k = make(algorithm, key, key_len);
        if (k == nullptr) {
            set_error(err, err_len, "algorithm not implemented by the shim");
            return 1;
        }
        if (k->digest_size() != tag_len) {
            char why[96];
            std::snprintf(why, sizeof why, "Crypto++ produces %u-byte tags, expected %zu",
                          k->digest_size(), tag_len);
            delete k;
            set_error(err, err_len, why);
            return 1;
        }
        *out = k;
        return 0;
    } catch (const std::exception &e) {
        set_error(err, err_len, e.what());
    } catch (...) {
        set_error(err, err_len, "unknown C++ exception");
    }
    return 1;
}

static void mbcpp_free(void *handle) { delete static_cast<Keyed *>(handle); }

// One message, whole. Returns 0 on success.
static int mbcpp_tag(void *handle, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
              uint8_t *tag, size_t tag_len) {
    return guarded(handle, [&](Keyed *k) {
        k->begin(nonce, nonce_len);
        k->update(msg, len);
        k->final(tag, tag_len);
    });
}

// Streaming: begin, any number of updates, final.
static int mbcpp_begin(void *handle, const uint8_t *nonce, size_t nonce_len) {
    return guarded(handle, [&](Keyed *k) { k->begin(nonce, nonce_len); });
}

static int mbcpp_update(void *handle, const uint8_t *data, size_t len) {
    return guarded(handle, [&](Keyed *k) { k->update(data, len); });
}

static int mbcpp_final(void *handle, uint8_t *tag, size_t tag_len) {
    return guarded(handle, [&](Keyed *k) { k->final(tag, tag_len); });
}

// The library's words for the last refused call on this object (empty if none), NUL-terminated.
static void mbcpp_last_error(void *handle, char *out, size_t out_len) {
    set_error(out, out_len, static_cast<Keyed *>(handle)->last_error.c_str());
}

// Library version as an integer (e.g. 870 for 8.7.0) and the headers' version.
static int mbcpp_library_version(void) { return CryptoPP::LibraryVersion(); }
static int mbcpp_header_version(void) { return CRYPTOPP_VERSION; }

// Bits of the features Crypto++ will use (after detection), per architecture: see cryptopp.rs
// `Features`.
unsigned mbcpp_features(void) {
#if defined(__x86_64__) || defined(__i386__)
    using namespace CryptoPP;
    unsigned f = 0;
    f |= HasSSE2() ? 1u << 0 : 0;
    f |= HasSSSE3() ? 1u << 1 : 0;
    f |= HasSSE41() ? 1u << 2 : 0;
    f |= HasSSE42() ? 1u << 3 : 0;
    f |= HasAESNI() ? 1u << 4 : 0;
    f |= HasCLMUL() ? 1u << 5 : 0;
    f |= HasSHA() ? 1u << 6 : 0;
    f |= HasAVX() ? 1u << 7 : 0;
    f |= HasAVX2() ? 1u << 8 : 0;
    return f;
#elif defined(__aarch64__)
    // The aarch64 bits, in cryptopp.rs `Features::NAMES` order there.
    using namespace CryptoPP;
    unsigned f = 0;
    f |= HasNEON() ? 1u << 0 : 0;
    f |= HasPMULL() ? 1u << 1 : 0;
    f |= HasAES() ? 1u << 2 : 0;
    f |= HasSHA1() ? 1u << 3 : 0;
    f |= HasSHA2() ? 1u << 4 : 0;
    f |= HasSHA512() ? 1u << 5 : 0;
    f |= HasSHA3() ? 1u << 6 : 0;
    f |= HasSM3() ? 1u << 7 : 0;
    f |= HasSM4() ? 1u << 8 : 0;
    return f;
#else
    return 0;
#endif
}

// Clear the feature flags whose bits are set in `mask` (bit i is cryptopp.rs `Features::NAMES[i]`, the
// order of mbcpp_features above): a switched child clears what its acceleration excludes (cryptopp.rs
// `LADDER` says which; the one definition lives there, not here). Crypto++ decides each call through
// HasAESNI() etc., which read these exported globals once detection has run, so the switch must happen
// before any object is keyed (the child does it first thing). Returns the feature bits afterwards.
unsigned mbcpp_clear_features(unsigned mask) {
#if defined(__x86_64__) || defined(__i386__)
    using namespace CryptoPP;
    if (!g_x86DetectionDone) {
        DetectX86Features();
    }
    bool *const flags[] = {&g_hasSSE2, &g_hasSSSE3, &g_hasSSE41, &g_hasSSE42, &g_hasAESNI,
                           &g_hasCLMUL, &g_hasSHA,  &g_hasAVX,   &g_hasAVX2};
#elif defined(__aarch64__)
    using namespace CryptoPP;
    if (!g_ArmDetectionDone) {
        DetectArmFeatures();
    }
    bool *const flags[] = {&g_hasNEON, &g_hasPMULL,  &g_hasAES, &g_hasSHA1, &g_hasSHA2,
                           &g_hasSHA512, &g_hasSHA3, &g_hasSM3, &g_hasSM4};
#else
    bool *const flags[] = {nullptr};
    mask = 0;
#endif
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (mask & (1u << i)) {
            *flags[i] = false;
        }
    }
    return mbcpp_features();
}

// Which code path Crypto++ picks now ("AESNI", "SHANI", "SSE2", "C++", ...), for the record and the
// tests: 0 = AES, 1 = SHA-1, 2 = SHA-256, 3 = SHA-512. Writes a NUL-terminated string into out.
void mbcpp_provider(int which, char *out, size_t out_len) {
    std::string p;
    try {
        using namespace CryptoPP;
        switch (which) {
        case 0: {
            const byte key[16] = {0};
            AES::Encryption aes(key, sizeof key);
            p = aes.AlgorithmProvider();
            break;
        }
        case 1: p = SHA1().AlgorithmProvider(); break;
        case 2: p = SHA256().AlgorithmProvider(); break;
        case 3: p = SHA512().AlgorithmProvider(); break;
        default: p = "?";
        }
    } catch (...) {
        p = "error";
    }
    set_error(out, out_len, p.c_str());
}

// The status in words: the exception Crypto++ threw, kept on the object.
static void shim_reason(const void *ctx, int status, char *out, size_t out_len) {
    (void)status;
    const std::string what = "Crypto++: " + static_cast<const Keyed *>(ctx)->last_error;
    set_error(out, out_len, what.c_str());
}

// "version=Crypto++ 8.7.0" (the library loaded at run time).
static void shim_describe(char *out, size_t out_len) {
    const int v = mbcpp_library_version();
    std::snprintf(out, out_len, "version=Crypto++ %d.%d.%d\nheaders=%d\n", v / 100, v / 10 % 10, v % 10,
                  mbcpp_header_version());
}

// Crypto++ picks its code paths from process-wide globals (the process switch), not per object.
static int shim_create(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                       size_t tag_len, void **out, char *why, size_t why_len) {
    *out = nullptr;
    if (level != 0) {
        set_error(why, why_len, MACBENCH_SHIM_NO_LEVELS);
        return 1;
    }
    return mbcpp_new(algorithm, key, key_len, tag_len, out, why, why_len);
}

// `extern`: a const object at namespace scope would otherwise have internal linkage in C++.
extern const macbench_shim macbench_shim_cryptopp = {
    MACBENCH_SHIM_ABI, "cryptopp",  shim_create, mbcpp_free,  mbcpp_tag,     mbcpp_begin,
    mbcpp_update,      mbcpp_final, nullptr,     shim_reason, shim_describe, nullptr,
    nullptr,           nullptr,
    /* software_only: Crypto++'s switch is its process-wide globals, cleared by the Rust side */
    nullptr,
    /* max_batch (the default), tag_prebuilt, counters: no descriptors, no device; rekey: a new
     * context per key */
    0, nullptr, nullptr, nullptr,
};

} // extern "C"
