/* macbench_shim.h - the one C face every C/C++ library shim gives macbench.
 *
 * Why one face: each shim used to have its own entry points, prefix and status words, so each backend
 * repeated the same Rust glue (an extern block, a wrapper, version and error plumbing). Now a shim
 * fills one table, `const macbench_shim macbench_shim_<backend>`, and src/mac/shim.rs wraps every table
 * the same way: a C backend is its shim, one row in build/libraries.rs (from which build.rs compiles
 * the shim and registers the backend, and CI takes the package to install), one module listing its
 * registry entries, and its feature in Cargo.toml.
 *
 * The contract, for every entry point:
 * - Status: 0 is done; anything else is "refused, no tag", and `reason` puts that status in the
 *   library's words. The Rust side checks every status on every path (a refused job is never timed).
 * - Contexts: `create` keys one context for one algorithm, once (key schedules, hashed HMAC pads,
 *   GHASH tables); per message the shim does only what the construction needs. A context is used by
 *   one thread at a time and freed once with `destroy`.
 * - Tags: `tag_len` at `create` is the construction's full tag length (the registry's); the tag
 *   entry points may be given a shorter length and then write that prefix.
 * - Streaming: `begin`, any number of `update`, `finish`. After a refused `update` the Rust side
 *   keys a fresh context with `create` (same algorithm, level and key) and destroys this one, so a
 *   shim need not reset anything on a refusal (nor take a `finish` of tag length 0). `streams` says whether pieces
 *   really reach the library one by one for this context (NULL: always).
 * - Facts: `describe` writes "key=value" lines (at least `version=`), the library's own account of
 *   itself at run time; backends read their version and limits from it, not from tables of their own.
 *
 * Plain C types only; no exception or allocation crosses the boundary.
 */

#ifndef MACBENCH_SHIM_H
#define MACBENCH_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the table changes shape; src/mac/shim.rs refuses a table of another ABI. */
#define MACBENCH_SHIM_ABI 4

typedef struct macbench_shim {
    unsigned abi;
    /* The backend's name in the registry ("nettle"). */
    const char *backend;
    /* Key a context for `algorithm` (the registry's name) producing `tag_len`-byte tags into *out, on
     * code path `level`: 0 is the library's default; 1..4 (sse, avx, avx2, avx512) only for a library
     * that keys ISA levels in-process, every other shim refuses them. Non-zero: *out is NULL and `why`
     * (why_len bytes, NUL-terminated) says why. */
    int (*create)(const char *algorithm, int level, const uint8_t *key, size_t key_len,
                  size_t tag_len, void **out, char *why, size_t why_len);
    void (*destroy)(void *ctx);
    /* One whole message. */
    int (*tag)(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg, size_t len,
               uint8_t *tag, size_t tag_len);
    /* A message in pieces. */
    int (*begin)(void *ctx, const uint8_t *nonce, size_t nonce_len);
    int (*update)(void *ctx, const uint8_t *data, size_t len);
    int (*finish)(void *ctx, uint8_t *tag, size_t tag_len);
    /* Whether begin/update/finish feed the library piece by piece for this context; NULL: always. */
    int (*streams)(const void *ctx);
    /* A non-zero status of a call on `ctx`, in words, NUL-terminated into out. */
    void (*reason)(const void *ctx, int status, char *out, size_t out_len);
    /* "key=value" lines, NUL-terminated into out: version=… first, then what the backend records. */
    void (*describe)(char *out, size_t out_len);

    /* Optional: NULL where the library has no such entry point (then the Rust side does without). */
    /* A message of `bits` bits, the first bits of msg (the 3GPP functions' known answers). */
    int (*tag_bits)(void *ctx, const uint8_t *nonce, size_t nonce_len, const uint8_t *msg,
                    uint64_t bits, uint8_t *tag, size_t tag_len);
    /* n messages (n <= max_batch) at once, nonces and tags back to back: a multi-buffer library fills its
     * lanes. `tag_inflight` keeps at most `depth` in the library at a time. */
    int (*tag_batch)(void *ctx, size_t n, const uint8_t *const *msgs, const size_t *lens,
                     const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len);
    int (*tag_inflight)(void *ctx, size_t n, const uint8_t *const *msgs, const size_t *lens,
                        const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len,
                        size_t depth);
    /* Switch the library's instruction-set extensions off for this whole process: the software-only
     * (`sw`) child calls it once, first thing, before any other entry (a library that picks its code
     * paths when it initialises must hear it before then); `describe` then reports what is left.
     * Non-zero: `why` says what could not be switched off. */
    int (*software_only)(char *why, size_t why_len);
    /* The most messages one tag_batch / tag_inflight / tag_prebuilt call takes; 0 means
     * MACBENCH_SHIM_MAX_BATCH. A device driver takes more (a queue's worth). */
    size_t max_batch;
    /* n messages whose descriptors may have been built before (on an earlier call with the same
     * message): dispatch `all`, the study's "built in advance, dispatched at once". NULL: tag_batch. */
    int (*tag_prebuilt)(void *ctx, size_t n, const uint8_t *const *msgs, const size_t *lens,
                        const uint8_t *nonces, size_t nonce_len, uint8_t *tags, size_t tag_len);
    /* What a context's calls cost the submitting core so far (a device driver's account): up to n
     * counters into out, in the order of src/mac/shim.rs's `OffloadCounters`; returns how many. */
    size_t (*counters)(const void *ctx, uint64_t *out, size_t n);
    /* Replace the key of a keyed context in place, as its library or device does it (a device's
     * session); NULL: a new context is keyed instead. Non-zero: the context keeps its old key and
     * `reason` says why. */
    int (*rekey)(void *ctx, const uint8_t *key, size_t key_len);
} macbench_shim;

/* The most messages one tag_batch / tag_inflight call takes. */
#define MACBENCH_SHIM_MAX_BATCH 16

/* What a shim that has only the library's default path says to a non-zero `level`. */
#define MACBENCH_SHIM_NO_LEVELS "this library keys only its default code path (level 0)"

#ifdef __cplusplus
}
#endif

#endif
