//! A refused stream update leaves a shim's context as the refusal left it: the next message must
//! start from the key. Pinned on a shim table written here, which behaves as the real shims did
//! where it went wrong (issue 47): `finish` with a tag length of 0 is refused before anything is
//! reset (gcrypt, nettle, openssl4, sodium, wolfSSL), and `begin` does not reset (nettle's and
//! wolfSSL's HMAC), so the old "reset by finish(…, 0)" tagged the next message on top of the
//! refused one's bytes.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

use macbench::mac::shim::{self, ShimTable, ABI};
use macbench::mac::KeyedMac;
use std::ffi::{c_char, c_int, c_void};

/// The fake library's context: a running FNV-1a over the key, then the message.
struct Ctx {
    keyed: u64,
    state: u64,
}

const REFUSED_LEN: usize = 13;
const FNV: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The tag the fake library gives `msg` under `key`.
fn expected(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let h = fnv(fnv(FNV, key), msg).to_le_bytes();
    let mut tag = [0u8; 32];
    for (i, t) in tag.iter_mut().enumerate() {
        *t = h[i % 8];
    }
    tag
}

unsafe extern "C" fn create(
    _algorithm: *const c_char,
    _level: c_int,
    key: *const u8,
    key_len: usize,
    _tag_len: usize,
    out: *mut *mut c_void,
    _why: *mut c_char,
    _why_len: usize,
) -> c_int {
    // SAFETY: the caller passes a key valid for key_len bytes and a writable out.
    let key = unsafe { std::slice::from_raw_parts(key, key_len) };
    let keyed = fnv(FNV, key);
    let ctx = Box::new(Ctx {
        keyed,
        state: keyed,
    });
    // SAFETY: as above.
    unsafe { *out = Box::into_raw(ctx).cast() };
    0
}

unsafe extern "C" fn destroy(ctx: *mut c_void) {
    // SAFETY: ctx came from create's Box and is freed once.
    drop(unsafe { Box::from_raw(ctx.cast::<Ctx>()) });
}

unsafe extern "C" fn write_tag(ctx: &mut Ctx, tag: *mut u8, tag_len: usize) -> c_int {
    if tag_len == 0 || tag_len > 32 {
        // Refused before anything is reset, as the real shims do.
        return 9;
    }
    let h = ctx.state.to_le_bytes();
    for i in 0..tag_len {
        // SAFETY: tag is writable for tag_len bytes.
        unsafe { *tag.add(i) = h[i % 8] };
    }
    ctx.state = ctx.keyed;
    0
}

unsafe extern "C" fn tag(
    ctx: *mut c_void,
    _nonce: *const u8,
    _nonce_len: usize,
    msg: *const u8,
    len: usize,
    out: *mut u8,
    tag_len: usize,
) -> c_int {
    // SAFETY: a live context of this table, used by one thread at a time.
    let ctx = unsafe { &mut *ctx.cast::<Ctx>() };
    // SAFETY: the caller passes msg valid for len bytes.
    let msg = unsafe { std::slice::from_raw_parts(msg, len) };
    ctx.state = fnv(ctx.keyed, msg);
    // SAFETY: out is writable for tag_len bytes.
    unsafe { write_tag(ctx, out, tag_len) }
}

/// Does not reset: the library's own state carries on (nettle's and wolfSSL's HMAC).
unsafe extern "C" fn begin(_ctx: *mut c_void, _nonce: *const u8, _nonce_len: usize) -> c_int {
    0
}

/// Absorbs what it is given, then refuses a piece of [`REFUSED_LEN`] bytes: the refusal leaves
/// the state changed.
unsafe extern "C" fn update(ctx: *mut c_void, data: *const u8, len: usize) -> c_int {
    // SAFETY: a live context of this table, used by one thread at a time.
    let ctx = unsafe { &mut *ctx.cast::<Ctx>() };
    // SAFETY: the caller passes data valid for len bytes.
    let data = unsafe { std::slice::from_raw_parts(data, len) };
    ctx.state = fnv(ctx.state, data);
    if len == REFUSED_LEN {
        7
    } else {
        0
    }
}

unsafe extern "C" fn finish(ctx: *mut c_void, out: *mut u8, tag_len: usize) -> c_int {
    // SAFETY: a live context of this table; out writable for tag_len bytes.
    unsafe { write_tag(&mut *ctx.cast::<Ctx>(), out, tag_len) }
}

unsafe extern "C" fn reason(_ctx: *const c_void, _status: c_int, out: *mut c_char, out_len: usize) {
    let text = b"refused by the test's shim\0";
    let n = text.len().min(out_len);
    // SAFETY: out is writable for out_len bytes; the text is NUL-terminated within n when it fits.
    unsafe { std::ptr::copy_nonoverlapping(text.as_ptr().cast(), out, n) };
}

unsafe extern "C" fn describe(out: *mut c_char, out_len: usize) {
    // SAFETY: as in reason.
    unsafe { reason(std::ptr::null(), 0, out, out_len) };
}

static FAKE: ShimTable = ShimTable {
    abi: ABI,
    backend: c"fake".as_ptr(),
    create,
    destroy,
    tag,
    begin,
    update,
    finish,
    streams: None,
    reason,
    describe,
    tag_bits: None,
    tag_batch: None,
    tag_inflight: None,
    software_only: None,
    max_batch: 0,
    tag_prebuilt: None,
    counters: None,
    rekey: None,
};

/// Issue 47: after a refused `stream_update`, a fresh message streamed through the same context
/// gets the tag of that message alone; so does one fed by `tag_chunks` after a refused piece.
#[test]
fn a_refused_stream_update_leaves_the_next_message_its_own_tag() {
    let key = b"a key";
    let mut mac = shim::create(&FAKE, "hmac-sha256", 0, key).unwrap();
    let mut tag = [0u8; 32];
    mac.tag_into(&[], b"hello", &mut tag).unwrap();
    assert_eq!(tag, expected(key, b"hello"), "the fake itself");

    mac.stream_begin(&[]).unwrap();
    mac.stream_update(&[b"first ".as_slice()]).unwrap();
    assert!(mac.stream_update(&[&[0u8; REFUSED_LEN]]).is_err());
    mac.stream_begin(&[]).unwrap();
    mac.stream_update(&[b"hel".as_slice(), b"lo".as_slice()])
        .unwrap();
    mac.stream_finish(&mut tag).unwrap();
    assert_eq!(
        tag,
        expected(key, b"hello"),
        "stream after a refused update"
    );

    assert!(mac
        .tag_chunks(&[], &[b"abc".as_slice(), &[1u8; REFUSED_LEN]], &mut tag)
        .is_err());
    mac.tag_chunks(&[], &[b"he".as_slice(), b"llo".as_slice()], &mut tag)
        .unwrap();
    assert_eq!(tag, expected(key, b"hello"), "chunks after a refused piece");
}

/// docs/benchmark.md's "which functions stream" table, checked against the code (issue 47: it left
/// out ring and AWS-LC, which refuse every stream, wolfSSL's GMAC, which refuses, and libgcrypt and
/// OpenSSL 4.0, which stream everything): each backend built here is in a row; a backend whose row
/// says "every function" streams each of its `hw` functions (`stream_begin` … `stream_finish`
/// give a tag), one whose row says "–" streams none.
#[test]
fn the_streaming_table_says_what_each_backend_does() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmark.md"),
    )
    .unwrap();
    let table = doc
        .split("| backend | streams | does not stream |")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    let rows: Vec<(Vec<String>, String)> = table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let names = cells[1]
                .split(',')
                .map(|n| n.trim().trim_matches('`').to_string())
                .collect();
            (names, cells[2].to_string())
        })
        .collect();
    let mut checked = 0;
    for f in macbench::mac::functions() {
        if f.accel != macbench::mac::Accel::Hw
            || f.availability() != macbench::mac::Availability::Available
            || ["null", "dpdk"].contains(&f.backend.name)
        {
            continue;
        }
        let (_, streams) = rows
            .iter()
            .find(|(names, _)| names.iter().any(|n| n == f.backend.name))
            .unwrap_or_else(|| {
                panic!(
                    "docs/benchmark.md's streaming table has no row for {}",
                    f.backend.name
                )
            });
        let key = vec![7u8; f.algorithm.default_key_len];
        let Ok(mut mac) = f.with_key(&key, macbench::mac::KeyParams::default()) else {
            continue;
        };
        let nonce = vec![1u8; f.algorithm.nonce_len.unwrap_or(0)];
        let mut tag = vec![0u8; f.algorithm.tag_len];
        let streamed = mac.stream_begin(&nonce).is_ok()
            && mac.stream_update(&[b"some bytes".as_slice()]).is_ok()
            && mac.stream_finish(&mut tag).is_ok();
        if streams.starts_with("every function") && !streams.contains(" but ") {
            assert!(
                streamed,
                "{}: the table says every function streams",
                f.id()
            );
            checked += 1;
        } else if streams == "–" {
            assert!(!streamed, "{}: the table says none streams", f.id());
            checked += 1;
        }
    }
    assert!(checked > 0, "no backend checked");
}
