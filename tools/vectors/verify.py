#!/usr/bin/env python3
"""Independently recompute every known-answer record in vectors/*.vec.

Usage: python3 tools/vectors/verify.py [VECTOR_DIR]

Needs: Python 3.9+, `cryptography` (CMAC/AES/GCM/Poly1305; AES under the UMAC and Poly1305-AES
written out here), `pycryptodome`
(KMAC, and the second path for HMAC over SHA-3-224/384/512 and SHA-512/224, /256), `blake3`, and for the Twofish/Serpent/RC6 files a C++ compiler with
Crypto++ (`apt-get install libcrypto++-dev`): tools/vectors/gen_cmac.cpp is
built into a temporary directory and used as the reference for those files.

For each file prints "<file>: N passed, M failed"; the last line is the total
"N passed, M failed". Exit status is 1 if anything failed.
"""
import hashlib
import hmac
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "vectors"))

# Full tag length in bytes of every MAC file (name without .vec).
TAG_LEN = {
    "hmac-md5": 16, "hmac-sha1": 20, "hmac-sha224": 28, "hmac-sha256": 32, "hmac-sha384": 48,
    "hmac-sha512": 64, "hmac-sha512-224": 28, "hmac-sha512-256": 32,
    "hmac-sha3-224": 28, "hmac-sha3-256": 32, "hmac-sha3-384": 48, "hmac-sha3-512": 64,
    "cmac-aes128": 16, "cmac-aes192": 16, "cmac-aes256": 16, "cbcmac-aes128": 16,
    "gmac-aes128": 16, "gmac-aes192": 16, "gmac-aes256": 16, "poly1305": 16, "kmac128": 32, "kmac256": 64,
    "blake2b-keyed": 64, "blake2s-keyed": 32, "blake3-keyed": 32, "siphash-2-4": 8,
    "cmac-twofish": 16, "cmac-serpent": 16, "cmac-rc6": 16, "poly1305-aes": 16,
    "umac32-aes128": 4, "umac64-aes128": 8, "umac96-aes128": 12, "umac128-aes128": 16,
    "xcbc-aes128": 16, "xcbc-aes128-96": 12,
    "eia2-aes128": 4, "eia3-zuc128": 4, "uia2-snow3g": 4, "uia1-kasumi": 4,
}
KEY_LEN = {  # required key length in bytes, where the algorithm fixes one
    "cmac-aes128": 16, "cmac-aes192": 24, "cmac-aes256": 32, "cbcmac-aes128": 16, "gmac-aes128": 16,
    "gmac-aes192": 24, "gmac-aes256": 32, "poly1305": 32, "blake3-keyed": 32, "siphash-2-4": 16,
    "cmac-twofish": 16, "cmac-serpent": 16, "cmac-rc6": 16, "poly1305-aes": 32,
    "umac32-aes128": 16, "umac64-aes128": 16, "umac96-aes128": 16, "umac128-aes128": 16,
    "xcbc-aes128": 16, "xcbc-aes128-96": 16,
    "eia2-aes128": 16, "eia3-zuc128": 16, "uia2-snow3g": 16, "uia1-kasumi": 16,
}
# Algorithms whose records carry a nonce, and its length (None: any).
NONCE_LEN = {"gmac-aes128": None, "gmac-aes192": None, "gmac-aes256": None, "poly1305-aes": 16, "umac32-aes128": None, "umac64-aes128": None,
             "umac96-aes128": None, "umac128-aes128": None,
             "eia2-aes128": 6, "eia3-zuc128": 6, "uia2-snow3g": 9, "uia1-kasumi": 9}
# The 3GPP parameters carried as nonce: the bits each byte may use (docs/methodology.md §5).
# COUNT || BEARER (5 bits) || DIRECTION (1 bit); COUNT-I || FRESH || DIRECTION (1 bit).
NONCE_MASK = {"eia2-aes128": b"\xff" * 4 + b"\x1f\x01", "eia3-zuc128": b"\xff" * 4 + b"\x1f\x01",
              "uia2-snow3g": b"\xff" * 8 + b"\x01", "uia1-kasumi": b"\xff" * 8 + b"\x01"}
# Algorithms whose records may give a bit length (`bits = N`, absent = 8 x bytes).
BIT_LENGTH = set(NONCE_MASK)
# Algorithms with no implementation here: their records are checked for form only, and counted apart.
NO_REFERENCE = {"eia3-zuc128": "ZUC", "uia2-snow3g": "SNOW 3G", "uia1-kasumi": "KASUMI"}
MAC_FIELDS = {"source", "key", "msg", "nonce", "custom", "tag", "truncated", "bits", "output_len"}
CIPHER_FIELDS = {"source", "key", "pt", "ct"}
HEX_RE = re.compile(r"^(?:[0-9a-f]{2})*$")


# ------------------------------------------------------------------ parsing
def parse_hex(s, what):
    if not HEX_RE.match(s):
        raise ValueError(f"{what}: not lowercase even-length hex: {s[:40]!r}")
    return bytes.fromhex(s)


def parse_msg(s):
    m = re.fullmatch(r"@seq\((\d+),(\d+)\)", s)
    if m:
        n, mod = int(m.group(1)), int(m.group(2))
        if not 1 <= mod <= 256:
            raise ValueError(f"bad @seq modulus {mod}")
        return bytes(i % mod for i in range(n))
    m = re.fullmatch(r"@repeat\(([0-9a-f]*),(\d+)\)", s)
    if m:
        return parse_hex(m.group(1), "@repeat") * int(m.group(2))
    if s.startswith("@"):
        raise ValueError(f"unknown generator {s!r}")
    return parse_hex(s, "msg")


def parse_file(path):
    """Return a list of (line_no, {field: value}) records."""
    records, cur, start = [], {}, 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, raw in enumerate(lines + [""], 1):
        line = raw.rstrip("\r")
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                records.append((start, cur))
                cur = {}
            continue
        if "=" not in line:
            raise ValueError(f"{path}:{no}: expected `field = value`")
        field, value = line.split("=", 1)
        field, value = field.strip(), value.strip()
        if field in cur:
            raise ValueError(f"{path}:{no}: duplicate field {field}")
        if not cur:
            start = no
        cur[field] = value
    return records


# ------------------------------------------------------------------ SipHash-2-4
def siphash24(key, msg):
    """SipHash-2-4 from the paper (Aumasson & Bernstein, 2012); returns 8 bytes LE."""
    mask = (1 << 64) - 1

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & mask

    def sipround(v0, v1, v2, v3):
        v0 = (v0 + v1) & mask; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32)
        v2 = (v2 + v3) & mask; v3 = rotl(v3, 16); v3 ^= v2
        v0 = (v0 + v3) & mask; v3 = rotl(v3, 21); v3 ^= v0
        v2 = (v2 + v1) & mask; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32)
        return v0, v1, v2, v3

    k0 = int.from_bytes(key[:8], "little")
    k1 = int.from_bytes(key[8:16], "little")
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    tail = len(msg) % 8
    for i in range(0, len(msg) - tail, 8):
        m = int.from_bytes(msg[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
        v0 ^= m
    b = ((len(msg) & 0xFF) << 56) | int.from_bytes(msg[len(msg) - tail:], "little")
    v3 ^= b
    v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
    v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
    v0 ^= b
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = sipround(v0, v1, v2, v3)
    return ((v0 ^ v1 ^ v2 ^ v3) & mask).to_bytes(8, "little")


# ------------------------------------------------------------------ MACs
def aes_ecb(key, block):
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(block) + enc.finalize()


def cbcmac_aes(key, msg):
    if len(msg) % 16 or not msg:
        msg = msg + b"\x00" * (16 - len(msg) % 16 if msg else 16)
    state = bytes(16)
    for i in range(0, len(msg), 16):
        state = aes_ecb(key, bytes(a ^ b for a, b in zip(state, msg[i:i + 16])))
    return state


def xcbc_aes(key, msg):
    """AES-XCBC-MAC (RFC 3566 §4), written out here over raw AES-ECB."""
    k1 = aes_ecb(key, b"\x01" * 16)
    k2 = aes_ecb(key, b"\x02" * 16)
    k3 = aes_ecb(key, b"\x03" * 16)
    if msg and len(msg) % 16 == 0:
        last, pad_key = msg[-16:], k2
    else:
        tail = len(msg) % 16
        last = msg[len(msg) - tail:] + b"\x80" + b"\x00" * (15 - tail)
        pad_key = k3
    body = msg[:len(msg) - 16] if (msg and len(msg) % 16 == 0) else msg[:len(msg) - len(msg) % 16]
    state = bytes(16)
    for i in range(0, len(body), 16):
        state = aes_ecb(k1, bytes(a ^ b for a, b in zip(state, body[i:i + 16])))
    return aes_ecb(k1, bytes(a ^ b ^ c for a, b, c in zip(state, last, pad_key)))


# HMAC over SHA3-224/384/512 and SHA-512/224, SHA-512/256: hashlib's name of the hash, and
# pycryptodome's hash module and its arguments.
HMAC_TWICE = {
    "hmac-sha3-224": ("sha3_224", "SHA3_224", {}), "hmac-sha3-384": ("sha3_384", "SHA3_384", {}),
    "hmac-sha3-512": ("sha3_512", "SHA3_512", {}),
    "hmac-sha512-224": ("sha512_224", "SHA512", {"truncate": "224"}),
    "hmac-sha512-256": ("sha512_256", "SHA512", {"truncate": "256"}),
}


def hmac_twice(alg, key, msg):
    """Python's hmac over hashlib's hash (OpenSSL's, for SHA-512/t) and pycryptodome's HMAC over its
    own hash code: both must agree, so the reference does not rest on one library."""
    import importlib
    from Crypto.Hash import HMAC as CryptoHMAC
    name, module, args = HMAC_TWICE[alg]
    ref = hmac.new(key, msg, name).digest()
    digestmod = importlib.import_module("Crypto.Hash." + module)
    if args:
        digestmod = digestmod.new(**args)
    alt = CryptoHMAC.new(key, msg, digestmod=digestmod).digest()
    return ref if ref == alt else b"HMAC paths disagree: " + ref.hex().encode() + b" / " + alt.hex().encode()


def cmac_aes(key, msg):
    from cryptography.hazmat.primitives import cmac
    from cryptography.hazmat.primitives.ciphers import algorithms
    c = cmac.CMAC(algorithms.AES(key))
    c.update(msg)
    return c.finalize()


def gmac_aes(key, nonce, msg):
    if len(nonce) == 12:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        return AESGCM(key).encrypt(nonce, b"", msg)  # = the 16-byte tag
    # Other IV lengths (GCM's J0 = GHASH of the IV): `cryptography`'s AESGCM takes 12-byte nonces
    # only, so pycryptodome, which takes any non-empty IV.
    from Crypto.Cipher import AES
    if not nonce:
        raise ValueError("GMAC nonce must not be empty")
    c = AES.new(key, AES.MODE_GCM, nonce=nonce, mac_len=16)
    c.update(msg)
    c.encrypt(b"")
    return c.digest()


def poly1305(key, msg):
    from cryptography.hazmat.primitives.poly1305 import Poly1305
    return Poly1305.generate_tag(key, msg)


def poly1305_aes(key, nonce, msg):
    """Bernstein's Poly1305-AES with Nettle's key layout: key = k || r (r clamped here, as the paper
    requires of r and Nettle does); tag = (Poly1305_r(m) + AES_k(n)) mod 2^128. Written out rather than
    through `cryptography`'s Poly1305 so the AES half and the key layout are checked too."""
    k, r = key[:16], int.from_bytes(key[16:], "little") & 0x0ffffffc0ffffffc0ffffffc0fffffff
    p = (1 << 130) - 5
    h = 0
    for i in range(0, len(msg), 16):
        h = (h + int.from_bytes(msg[i:i + 16] + b"\x01", "little")) * r % p
    s = int.from_bytes(aes_ecb(k, nonce), "little")
    return ((h + s) % (1 << 128)).to_bytes(16, "little")


def umac(key, nonce, msg, taglen):
    """UMAC with AES-128 as RFC 4418 section 4-6 define it (KDF, PDF, UHASH = L1 NH, L2 POLY, L3),
    written from the RFC's pseudocode: NH reads message words little-endian and key words big-endian;
    everything else is big-endian."""
    def kdf(index, n):
        out = b""
        i = 1
        while len(out) < n:
            out += aes_ecb(key, index.to_bytes(8, "big") + i.to_bytes(8, "big"))
            i += 1
        return out[:n]

    def pdf():
        nl = len(nonce)
        nn = bytearray(nonce)
        idx = 0
        if taglen in (4, 8):
            idx = int.from_bytes(nonce, "big") % (16 // taglen)
            nn = bytearray(a ^ b for a, b in zip(nonce, idx.to_bytes(nl, "big")))
        t = aes_ecb(kdf(0, 16), bytes(nn) + bytes(16 - nl))
        return t[idx * taglen: idx * taglen + taglen] if taglen in (4, 8) else t[:taglen]

    def nh(k, m):
        mw = [int.from_bytes(m[i:i + 4], "little") for i in range(0, len(m), 4)]
        kw = [int.from_bytes(k[i:i + 4], "big") for i in range(0, len(m), 4)]
        y = 0
        for i in range(0, len(mw), 8):
            for j in range(4):
                y += ((mw[i + j] + kw[i + j]) & 0xffffffff) * ((mw[i + j + 4] + kw[i + j + 4]) & 0xffffffff)
        return y & (2**64 - 1)

    def l1(k, m):
        chunks = [m[i:i + 1024] for i in range(0, len(m), 1024)] or [b""]
        y = b""
        for c in chunks:
            bits = len(c) * 8
            c = c + bytes((-len(c)) % 32) if c else bytes(32)
            y += ((nh(k, c) + bits) & (2**64 - 1)).to_bytes(8, "big")
        return y

    def poly(wordbits, maxwordrange, k, m):
        wb = wordbits // 8
        p = 2**64 - 59 if wordbits == 64 else 2**128 - 159
        offset = 2**wordbits - p
        marker = p - 1
        y = 1
        for i in range(0, len(m), wb):
            w = int.from_bytes(m[i:i + wb], "big")
            if w >= maxwordrange:
                y = (k * y + marker) % p
                y = (k * y + (w - offset)) % p
            else:
                y = (k * y + w) % p
        return y

    def l2(k, m):
        k64 = int.from_bytes(k[:8], "big") & 0x01FFFFFF01FFFFFF
        k128 = int.from_bytes(k[8:24], "big") & 0x01FFFFFF01FFFFFF01FFFFFF01FFFFFF
        if len(m) <= 2**17:
            y = poly(64, 2**64 - 2**32, k64, m)
        else:
            m1, m2 = m[:2**17], m[2**17:] + b"\x80"
            m2 += bytes((-len(m2)) % 16)
            y = poly(64, 2**64 - 2**32, k64, m1)
            y = poly(128, 2**128 - 2**96, k128, y.to_bytes(16, "big") + m2)
        return y.to_bytes(16, "big")

    def l3(k1, k2, m):
        p36 = 2**36 - 5
        y = sum(int.from_bytes(m[2 * i:2 * i + 2], "big") * (int.from_bytes(k1[8 * i:8 * i + 8], "big") % p36)
                for i in range(8)) % p36
        y &= 0xffffffff
        return bytes(a ^ b for a, b in zip(y.to_bytes(4, "big"), k2))

    iters = taglen // 4
    L1 = kdf(1, 1024 + (iters - 1) * 16)
    L2 = kdf(2, iters * 24)
    L31 = kdf(3, iters * 64)
    L32 = kdf(4, iters * 4)
    h = b""
    for i in range(iters):
        a = l1(L1[16 * i:16 * i + 1024], msg)
        b = bytes(8) + a if len(msg) <= 1024 else l2(L2[24 * i:24 * i + 24], a)
        h += l3(L31[64 * i:64 * i + 64], L32[4 * i:4 * i + 4], b)
    return bytes(x ^ y for x, y in zip(pdf(), h))


def kmac(bits, key, msg, custom, tag_len):
    if bits == 128:
        from Crypto.Hash import KMAC128 as K
    else:
        from Crypto.Hash import KMAC256 as K
    return K.new(key=key, data=msg, mac_len=tag_len, custom=custom).digest()


def blake3_keyed(key, msg):
    import blake3
    return blake3.blake3(msg, key=key).digest()


def compute(alg, rec, tag_len, crypto_pp):
    key, msg = rec["key_b"], rec["msg_b"]
    if alg in HMAC_TWICE:
        return hmac_twice(alg, key, msg)
    if alg.startswith("hmac-"):
        h = {"hmac-md5": hashlib.md5, "hmac-sha1": hashlib.sha1, "hmac-sha224": hashlib.sha224,
             "hmac-sha256": hashlib.sha256, "hmac-sha384": hashlib.sha384, "hmac-sha512": hashlib.sha512, "hmac-sha3-256": hashlib.sha3_256}[alg]
        return hmac.new(key, msg, h).digest()
    if alg in ("cmac-aes128", "cmac-aes192", "cmac-aes256"):
        return cmac_aes(key, msg)
    if alg == "cbcmac-aes128":
        return cbcmac_aes(key, msg)
    if alg == "xcbc-aes128":
        return xcbc_aes(key, msg)
    if alg == "xcbc-aes128-96":
        return xcbc_aes(key, msg)[:12]  # RFC 3566 §2.3: the first 96 bits
    if alg in ("gmac-aes128", "gmac-aes192", "gmac-aes256"):
        return gmac_aes(key, rec["nonce_b"], msg)
    if alg == "poly1305":
        return poly1305(key, msg)
    if alg == "poly1305-aes":
        return poly1305_aes(key, rec["nonce_b"], msg)
    if alg.startswith("umac") and alg.endswith("-aes128"):
        if not 1 <= len(rec["nonce_b"]) <= 16:
            raise ValueError("UMAC nonce must be 1..16 bytes")
        return umac(key, rec["nonce_b"], msg, tag_len)
    if alg in ("kmac128", "kmac256"):
        return kmac(int(alg[4:]), key, msg, rec.get("custom_b", b""), tag_len)
    if alg == "blake2b-keyed":
        return hashlib.blake2b(msg, key=key, digest_size=64).digest()
    if alg == "blake2s-keyed":
        return hashlib.blake2s(msg, key=key, digest_size=32).digest()
    if alg == "blake3-keyed":
        return blake3_keyed(key, msg)
    if alg == "siphash-2-4":
        return siphash24(key, msg)
    if alg == "eia2-aes128":
        return eia2(key, rec["nonce_b"], msg, rec["bits"])
    if alg in ("cmac-twofish", "cmac-serpent", "cmac-rc6"):
        cipher = alg.split("-")[1]
        ref = crypto_pp.run("cmac", cipher, key, msg)
        # Second, independent path: CMAC (SP 800-38B) written here in Python on
        # top of the raw block cipher, so the mode is checked apart from
        # Crypto++'s CMAC<> code.
        alt = cmac_generic(lambda blk: crypto_pp.run("ecb", cipher, key, blk), msg)
        return ref if ref == alt else b"CMAC paths disagree: " + ref.hex().encode() + b" / " + alt.hex().encode()
    raise ValueError(f"no verifier for {alg}")


def eia2(key, nonce, msg, bits):
    """128-EIA2 (3GPP TS 33.401 B.2.3): AES-CMAC over COUNT || BEARER || DIRECTION || 0^26 || MESSAGE
    of 64 + bits bits, the first 32 bits of the tag. The bit-string CMAC is written out here (SP 800-38B
    pads an incomplete last block with a 1 bit and zeros); for whole bytes it is also checked against
    `cryptography`'s CMAC, so the bit-level code is itself checked."""
    count, bearer, direction = nonce[:4], nonce[4], nonce[5]
    header = count + bytes([(bearer << 3) | (direction << 2), 0, 0, 0])
    total = 64 + bits
    data = int.from_bytes(header + msg, "big") >> (8 * (8 + len(msg)) - total)  # the bits, as a number
    n = max(1, -(-total // 128))
    k1 = cmac_subkey(aes_ecb(key, bytes(16)))
    k2 = cmac_subkey(k1)
    last_bits = total - 128 * (n - 1)
    last = data & ((1 << last_bits) - 1)
    if last_bits == 128:
        last = int.from_bytes(k1, "big") ^ last
    else:
        last = int.from_bytes(k2, "big") ^ (((last << 1) | 1) << (127 - last_bits))
    x = bytes(16)
    for i in range(n - 1):
        block = (data >> (total - 128 * (i + 1))) & ((1 << 128) - 1)
        x = aes_ecb(key, (int.from_bytes(x, "big") ^ block).to_bytes(16, "big"))
    tag = aes_ecb(key, (int.from_bytes(x, "big") ^ last).to_bytes(16, "big"))
    if bits % 8 == 0 and tag != cmac_aes(key, header + msg):
        raise ValueError("bit-level CMAC disagrees with cryptography's CMAC")
    return tag[:4]


def cmac_subkey(b):
    n = int.from_bytes(b, "big") << 1
    if n >> 128:
        n = (n & ((1 << 128) - 1)) ^ 0x87
    return n.to_bytes(16, "big")


def cmac_generic(encrypt_block, msg):
    """NIST SP 800-38B CMAC for a 128-bit block cipher given as encrypt_block."""
    def dbl(b):
        n = int.from_bytes(b, "big") << 1
        if n >> 128:
            n = (n & ((1 << 128) - 1)) ^ 0x87
        return n.to_bytes(16, "big")

    k1 = dbl(encrypt_block(bytes(16)))
    k2 = dbl(k1)
    n = max(1, -(-len(msg) // 16))
    last = msg[16 * (n - 1):]
    if len(last) == 16:
        last = bytes(a ^ b for a, b in zip(last, k1))
    else:
        last = bytes(a ^ b for a, b in zip(last + b"\x80" + bytes(15 - len(last)), k2))
    x = bytes(16)
    for i in range(n - 1):
        x = encrypt_block(bytes(a ^ b for a, b in zip(x, msg[16 * i:16 * i + 16])))
    return encrypt_block(bytes(a ^ b for a, b in zip(x, last)))


# ------------------------------------------------------------------ Crypto++ helper
class CryptoPP:
    """Builds tools/vectors/gen_cmac.cpp once and answers queries through it."""

    def __init__(self):
        self.exe = None
        self.error = None
        self.cache = {}

    def _build(self):
        if self.exe or self.error:
            return
        cxx = shutil.which("g++") or shutil.which("c++")
        if not cxx:
            self.error = "no C++ compiler"
            return
        self.tmp = tempfile.mkdtemp(prefix="gen_cmac.")
        exe = os.path.join(self.tmp, "gen_cmac")
        src = os.path.join(HERE, "gen_cmac.cpp")
        r = subprocess.run([cxx, "-O2", "-std=c++17", "-o", exe, src, "-lcryptopp"],
                           capture_output=True, text=True)
        if r.returncode:
            self.error = "cannot build gen_cmac.cpp (is libcrypto++-dev installed?): " + r.stderr.strip()[:300]
            return
        r = subprocess.run([exe, "selftest"], capture_output=True, text=True)
        if r.returncode:
            self.error = "gen_cmac selftest failed: " + r.stderr.strip()
            return
        self.exe = exe

    def run(self, op, cipher, key, data):
        k = (op, cipher, key, data)
        if k not in self.cache:
            self._build()
            if self.error:
                raise RuntimeError(self.error)
            line = f"{op} {cipher} {key.hex()} {data.hex() or '-'}\n"
            r = subprocess.run([self.exe, "batch"], input=line, capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError(r.stderr.strip())
            self.cache[k] = bytes.fromhex(r.stdout.strip())
        return self.cache[k]


# ------------------------------------------------------------------ driver
def check_mac_file(alg, records, crypto_pp):
    passed, failed, unchecked = 0, [], []
    for line, rec in records:
        tag_len = TAG_LEN[alg]
        try:
            if "output_len" in rec:
                # KMAC's output length L (bytes): an input of the construction, not a truncation.
                if not alg.startswith("kmac"):
                    raise ValueError("output_len only allowed for KMAC")
                if not re.fullmatch(r"[1-9]\d*", rec["output_len"]):
                    raise ValueError(f"output_len must be a positive number: {rec['output_len']!r}")
                tag_len = int(rec["output_len"])
            unknown = set(rec) - MAC_FIELDS
            if unknown:
                raise ValueError(f"unknown fields {sorted(unknown)}")
            for f in ("source", "key", "msg", "tag"):
                if f not in rec:
                    raise ValueError(f"missing {f}")
            if not rec["source"]:
                raise ValueError("empty source")
            rec["key_b"] = parse_msg(rec["key"])  # hex or a generator, as for msg
            rec["msg_b"] = parse_msg(rec["msg"])
            if "nonce" in rec:
                if alg not in NONCE_LEN:
                    raise ValueError(f"nonce only allowed for {sorted(NONCE_LEN)}")
                rec["nonce_b"] = parse_hex(rec["nonce"], "nonce")
                want = NONCE_LEN[alg]
                if want is not None and len(rec["nonce_b"]) != want:
                    raise ValueError(f"nonce length {len(rec['nonce_b'])}, expected {want}")
            elif alg in NONCE_LEN:
                raise ValueError(f"{alg} record without nonce")
            if "custom" in rec:
                if not alg.startswith("kmac"):
                    raise ValueError("custom only allowed for KMAC")
                rec["custom_b"] = parse_msg(rec["custom"])
                if not rec["custom_b"]:
                    raise ValueError("empty custom must be omitted")
            if "bits" in rec:
                if alg not in BIT_LENGTH:
                    raise ValueError(f"bits only allowed for {sorted(BIT_LENGTH)}")
                if not re.fullmatch(r"[1-9]\d*", rec["bits"]):
                    raise ValueError(f"bits must be a positive number: {rec['bits']!r}")
                rec["bits"] = int(rec["bits"])
                if rec["bits"] % 8 == 0 or -(-rec["bits"] // 8) != len(rec["msg_b"]):
                    raise ValueError(f"bits = {rec['bits']} needs msg of ceil(bits/8) bytes and is "
                                     "given only when not a multiple of 8")
            else:
                rec["bits"] = 8 * len(rec["msg_b"])
            if alg in NONCE_MASK:
                if any(b & ~m for b, m in zip(rec["nonce_b"], NONCE_MASK[alg])):
                    raise ValueError("nonce sets bits outside COUNT/BEARER/FRESH/DIRECTION")
            tag = parse_hex(rec["tag"], "tag")
            truncated = rec.get("truncated")
            if truncated not in (None, "true"):
                raise ValueError(f"truncated must be `true`, got {truncated!r}")
            if alg in KEY_LEN and len(rec["key_b"]) != KEY_LEN[alg]:
                raise ValueError(f"key length {len(rec['key_b'])}, expected {KEY_LEN[alg]}")
            if truncated:
                if not 0 < len(tag) < tag_len:
                    raise ValueError(f"truncated tag length {len(tag)} not in 1..{tag_len - 1}")
            elif len(tag) != tag_len:
                raise ValueError(f"tag length {len(tag)}, expected {tag_len}")
            if alg in NO_REFERENCE:
                unchecked.append(line)
                continue
            got = compute(alg, rec, tag_len, crypto_pp)
            if got[:len(tag)] != tag:
                raise ValueError(f"tag mismatch: computed {got.hex()}")
            passed += 1
        except Exception as e:  # noqa: BLE001 - report every failure, keep going
            failed.append(f"  line {line} ({rec.get('source', '?')}): {e}")
    if unchecked:
        print(f"{alg}.vec: {len(unchecked)} records checked for form only: no {NO_REFERENCE[alg]} "
              "implementation here to recompute them (they pass ipsec-mb in the known-answer tests)")
    return passed, failed


def check_cipher_file(cipher, records, crypto_pp):
    passed, failed = 0, []
    for line, rec in records:
        try:
            unknown = set(rec) - CIPHER_FIELDS
            if unknown or set(rec) != CIPHER_FIELDS:
                raise ValueError(f"fields must be exactly {sorted(CIPHER_FIELDS)}")
            key = parse_hex(rec["key"], "key")
            pt = parse_hex(rec["pt"], "pt")
            ct = parse_hex(rec["ct"], "ct")
            if len(key) != 16 or len(pt) != 16 or len(ct) != 16:
                raise ValueError("key, pt and ct must be 16 bytes")
            got = crypto_pp.run("ecb", cipher, key, pt)
            if got != ct:
                raise ValueError(f"ciphertext mismatch: Crypto++ gives {got.hex()}")
            passed += 1
        except Exception as e:  # noqa: BLE001
            failed.append(f"  line {line} ({rec.get('source', '?')}): {e}")
    return passed, failed


def main():
    vdir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR
    crypto_pp = CryptoPP()
    total_p = total_f = 0
    names = sorted(f for f in os.listdir(vdir) if f.endswith(".vec"))
    for fname in names:
        alg = fname[:-4]
        path = os.path.join(vdir, fname)
        try:
            records = parse_file(path)
            if not records:
                raise ValueError("no records")
            if alg.startswith("cipher-"):
                p, fails = check_cipher_file(alg[len("cipher-"):], records, crypto_pp)
            elif alg in TAG_LEN:
                p, fails = check_mac_file(alg, records, crypto_pp)
            else:
                raise ValueError("unknown vector file (add it to TAG_LEN)")
        except Exception as e:  # noqa: BLE001
            p, fails = 0, [f"  {e}"]
        print(f"{fname}: {p} passed, {len(fails)} failed")
        for msg in fails:
            print(msg)
        total_p += p
        total_f += len(fails)
    if getattr(crypto_pp, "tmp", None):
        shutil.rmtree(crypto_pp.tmp, ignore_errors=True)
    print(f"{total_p} passed, {total_f} failed")
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main())
