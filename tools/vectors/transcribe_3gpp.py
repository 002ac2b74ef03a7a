#!/usr/bin/env python3
"""Transcribe the published 3GPP/ETSI integrity test sets from intel-ipsec-mb's test files into
vectors/eia2-aes128.vec, eia3-zuc128.vec, uia2-snow3g.vec and uia1-kasumi.vec.

Usage: python3 tools/vectors/transcribe_3gpp.py DIR [OUT_DIR]

DIR holds intel-ipsec-mb v1.3's test/cmac_test.c, test/zuc_test_vectors.h, test/snow3g_test_vectors.h
and test/kasumi_test_vectors.h (e.g. `git -C intel-ipsec-mb show v1.3:test/zuc_test_vectors.h`).
Only the records those files label as 3GPP/ETSI test sets are taken; Intel's own extra cases are not.
Run once to produce the files; they are then plain data, checked by tools/vectors/verify.py and the
known-answer tests. Kept so the transcription can be repeated and reviewed.
"""
import os
import re
import sys

INTEL = "intel-ipsec-mb v1.3 (commit c3f041b0)"


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text, flags=re.S), flags=re.S)


def parse_init(text):
    """Parse a C initializer `{ ... }` into nested lists of ints."""
    tokens = re.findall(r"[{}]|0[xX][0-9a-fA-F]+|\d+", text)
    pos = 0

    def value():
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok == "{":
            out = []
            while tokens[pos] != "}":
                out.append(value())
            pos += 1
            return out
        return int(tok, 0)

    return value()


def array(text, name):
    m = re.search(re.escape(name) + r"\s*\[[^\]]*\]\s*=\s*(\{.*?\});", text, flags=re.S)
    return parse_init(strip_comments(m.group(1)))


def hexs(bs):
    return bytes(bs).hex()


def msg_bytes(data, bits):
    """The message as ceil(bits/8) bytes: the test files pad their arrays; the documents do not."""
    n = (bits + 7) // 8
    if len(data) < n:
        raise ValueError(f"{len(data)} bytes for {bits} bits")
    return data[:n]


def record(source, key, nonce, msg, bits, tag):
    lines = [f"source = {source}", f"key = {hexs(key)}", f"nonce = {hexs(nonce)}",
             f"msg = {hexs(msg)}"]
    if bits != 8 * len(msg):
        lines.append(f"bits = {bits}")
    lines.append(f"tag = {hexs(tag)}")
    return "\n".join(lines) + "\n"


def eia2(d):
    text = open(os.path.join(d, "cmac_test.c")).read()
    table = re.search(r"cmac_3gpp_vectors\[\] = \{(.*?)\n\};", text, flags=re.S).group(1)
    rows = re.findall(r"EIA2_128_M_(\d), (\d+), EIA2_128_T_\d", table)
    out = []
    for n, total in rows:
        total = int(total)
        key = array(text, f"EIA2_128_K_{n}")
        m = array(text, f"EIA2_128_M_{n}")
        tag = array(text, f"EIA2_128_T_{n}")
        header, body = m[:8], m[8:]
        count = header[:4]
        bearer = header[4] >> 3
        direction = (header[4] >> 2) & 1
        if header[4] & 3 or any(header[5:8]):
            raise ValueError(f"EIA2 test set {n}: header padding not zero")
        bits = total - 64
        out.append(record(
            f"3GPP TS 33.401 Annex C.2, 128-EIA2 Test Set {n} (transcribed from {INTEL} test/cmac_test.c)",
            key, count + [bearer, direction], msg_bytes(body, bits), bits, tag))
    return out


def eia3(d):
    text = strip_comments(open(os.path.join(d, "zuc_test_vectors.h")).read())
    vecs = parse_init(re.search(r"testEIA3_vectors\[\]\s*=\s*(\{.*?\});", text, flags=re.S).group(1))
    out = []
    # The first five are ETSI/SAGE's test sets 1-5; the rest are Intel's own ("Custom test").
    for i, (key, count, bearer, direction, bits, msg, mac) in enumerate(vecs[:5], 1):
        out.append(record(
            f"ETSI/SAGE 128-EEA3 & 128-EIA3 Document 3: Implementor's Test Data v1.1, 128-EIA3 Test Set {i} "
            f"(transcribed from {INTEL} test/zuc_test_vectors.h)",
            key, list(count.to_bytes(4, "big")) + [bearer, direction], msg_bytes(msg, bits), bits, mac))
    return out


def uia2(d):
    text = strip_comments(open(os.path.join(d, "snow3g_test_vectors.h")).read())
    vecs = parse_init(re.search(r"snow_f9_vectors\[\]\s*=\s*(\{.*?\});", text, flags=re.S).group(1))
    out = []
    for i, (msg, bits, key, _klen, mac, _iv, _ivlen, direction, (count, fresh, dir2)) in enumerate(vecs, 1):
        if direction != dir2:
            raise ValueError(f"UIA2 test set {i}: two directions")
        out.append(record(
            f"ETSI/SAGE UEA2 & UIA2 Document 3: Implementors' Test Data v1.1 (3GPP TS 35.223), UIA2 Test Set {i} "
            f"(transcribed from {INTEL} test/snow3g_test_vectors.h)",
            key, list(count.to_bytes(4, "big")) + list(fresh.to_bytes(4, "big")) + [direction],
            msg_bytes(msg, bits), bits, mac))
    return out


def uia1(d):
    text = strip_comments(open(os.path.join(d, "kasumi_test_vectors.h")).read())
    vecs = parse_init(re.search(r"kasumi_f9_IV_vectors\[\]\s*=\s*(\{.*?\});", text, flags=re.S).group(1))
    out = []
    for i, (msg, bits, key, _klen, mac, iv, ivlen, direction) in enumerate(vecs, 1):
        if ivlen != 8:
            raise ValueError("KASUMI IV is COUNT-I || FRESH, 8 bytes")
        out.append(record(
            f"3GPP TS 35.203 (f9 / UIA1 test data), Test Set {i} "
            f"(transcribed from {INTEL} test/kasumi_test_vectors.h)",
            key, iv[:8] + [direction], msg_bytes(msg, bits), bits, mac[:4]))
    return out


HEADERS = {
    "eia2-aes128": """# 128-EIA2 (3GPP TS 33.401 Annex B.2): AES-128-CMAC over
# COUNT (32 bits) || BEARER (5) || DIRECTION (1) || 0^26 || MESSAGE, the MAC-I
# being the first 32 bits of the CMAC (tag = 4 bytes).
# nonce = COUNT (4 bytes, big-endian) || BEARER (1 byte, low 5 bits) ||
#         DIRECTION (1 byte, low bit); the other bits must be 0.
# bits = the message length in bits when not 8 x bytes (the message's bits
# are the first `bits` bits of msg, most significant bit of each byte first).
# Sources: 3GPP TS 33.401 Annex C.2 (128-EIA2 test sets 1-8), transcribed
# from intel-ipsec-mb v1.3 test/cmac_test.c (which gives each set as the
# whole CMAC input, header included) by tools/vectors/transcribe_3gpp.py.
# Independently recomputed (bit-level CMAC over AES) by tools/vectors/verify.py.
""",
    "eia3-zuc128": """# 128-EIA3 (ETSI/SAGE 128-EEA3 & 128-EIA3 Document 1): the ZUC-based
# integrity algorithm, MAC-I = 32 bits (tag = 4 bytes).
# nonce = COUNT (4 bytes, big-endian) || BEARER (1 byte, low 5 bits) ||
#         DIRECTION (1 byte, low bit); the other bits must be 0.
# bits = the message length in bits when not 8 x bytes (most significant bit
# of each byte first).
# Sources: ETSI/SAGE "Specification of the 3GPP Confidentiality and Integrity
# Algorithms 128-EEA3 & 128-EIA3. Document 3: Implementor's Test Data",
# 128-EIA3 test sets 1-5, transcribed from intel-ipsec-mb v1.3
# test/zuc_test_vectors.h by tools/vectors/transcribe_3gpp.py.
# Not recomputed independently: no second ZUC implementation is at hand.
""",
    "uia2-snow3g": """# UIA2 (ETSI/SAGE UEA2 & UIA2 Document 1; 3GPP TS 35.215): the SNOW 3G
# based f9, MAC-I = 32 bits (tag = 4 bytes).
# nonce = COUNT-I (4 bytes, big-endian) || FRESH (4 bytes, big-endian) ||
#         DIRECTION (1 byte, low bit); the other bits must be 0.
# bits = the message length in bits when not 8 x bytes (most significant bit
# of each byte first).
# Sources: ETSI/SAGE "UEA2 & UIA2 Document 3: Implementors' Test Data"
# (3GPP TS 35.223), UIA2 test sets 1-6, transcribed from intel-ipsec-mb v1.3
# test/snow3g_test_vectors.h by tools/vectors/transcribe_3gpp.py.
# Not recomputed independently: no second SNOW 3G implementation is at hand.
""",
    "uia1-kasumi": """# UIA1 (3GPP TS 35.201 f9): the KASUMI-based integrity function,
# MAC-I = 32 bits (tag = 4 bytes).
# nonce = COUNT-I (4 bytes, big-endian) || FRESH (4 bytes, big-endian) ||
#         DIRECTION (1 byte, low bit); the other bits must be 0.
# bits = the message length in bits when not 8 x bytes (most significant bit
# of each byte first).
# Sources: 3GPP TS 35.203 (KASUMI f8/f9 implementors' test data), f9 test
# sets 1-5, transcribed from intel-ipsec-mb v1.3 test/kasumi_test_vectors.h
# (kasumi_f9_IV_vectors) by tools/vectors/transcribe_3gpp.py.
# Not recomputed independently: no second KASUMI implementation is at hand.
""",
}


def main():
    src = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "vectors")
    for name, fn in (("eia2-aes128", eia2), ("eia3-zuc128", eia3), ("uia2-snow3g", uia2),
                     ("uia1-kasumi", uia1)):
        records = fn(src)
        with open(os.path.join(out_dir, name + ".vec"), "w") as f:
            f.write(HEADERS[name] + "\n" + "\n".join(records))
        print(f"{name}.vec: {len(records)} records")


if __name__ == "__main__":
    main()
