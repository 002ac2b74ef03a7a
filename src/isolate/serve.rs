//! `serve` mode: keyed objects living in a switched child, used from the parent through [`Proxy`].
//!
//! For correctness paths only (self-test, `tag`, the known-answer and cross-backend tests): every
//! message is a pipe round trip, so a proxy is never timed — the sweep runs a whole switched scenario
//! in a `run` child instead. One `serve` child per acceleration (`sw`, `sse`, …) per process, each
//! started on first use of its acceleration and restarted after it dies; a function's objects live in
//! its own acceleration's child, so they run the masked code paths.
//!
//! Frames: a request is `op: u8`, `fields: u32`, then each field as `len: u32` + bytes (little-endian).
//! A reply is `status: u8` (0 ok) and one field. Ops: `KEY [function id, key, customization]` → id (8 bytes)
//! and streams (1 byte); `TAG [id, nonce, tag length (4 bytes), chunk…]` → tag; `FREE [id]` → no reply.

use super::command;
use crate::mac::{self, Accel, Function, KeyParams, KeyedMac, MacError, Refused, TagResult};
use std::collections::btree_map::{BTreeMap, Entry};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

const OP_KEY: u8 = 1;
const OP_TAG: u8 = 2;
const OP_FREE: u8 = 3;

fn write_frame(w: &mut impl Write, head: u8, fields: &[&[u8]]) -> std::io::Result<()> {
    w.write_all(&[head])?;
    w.write_all(&(fields.len() as u32).to_le_bytes())?;
    for f in fields {
        w.write_all(&(f.len() as u32).to_le_bytes())?;
        w.write_all(f)?;
    }
    w.flush()
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_field(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let len = read_u32(r)? as usize;
    let mut v = vec![0u8; len];
    r.read_exact(&mut v)?;
    Ok(v)
}

/// Returns `None` at end of input.
fn read_frame(r: &mut impl BufRead) -> std::io::Result<Option<(u8, Vec<Vec<u8>>)>> {
    if r.fill_buf()?.is_empty() {
        return Ok(None);
    }
    let mut head = [0u8; 1];
    r.read_exact(&mut head)?;
    let n = read_u32(r)?;
    let fields = (0..n).map(|_| read_field(r)).collect::<Result<_, _>>()?;
    Ok(Some((head[0], fields)))
}

fn id_of(field: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = field.len().min(8);
    b[..n].copy_from_slice(&field[..n]);
    u64::from_le_bytes(b)
}

/// Child side: key, tag and free objects of this child's acceleration on request until stdin closes.
pub(super) fn serve(accel: Accel) -> Result<(), String> {
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = BufWriter::new(std::io::stdout().lock());
    let mut objects: std::collections::HashMap<u64, Box<dyn KeyedMac>> = Default::default();
    let mut next_id = 1u64;
    let functions = mac::functions();
    while let Some((op, fields)) = read_frame(&mut input).map_err(|e| e.to_string())? {
        let reply: Result<Vec<u8>, String> = match (op, fields.as_slice()) {
            (OP_KEY, [function, key, custom, output_len]) => {
                let id = String::from_utf8_lossy(function);
                functions
                    .iter()
                    .find(|f| f.id() == id && f.accel == accel)
                    .ok_or_else(|| format!("no {accel} function {id}"))
                    .and_then(|f| {
                        f.with_key(
                            key,
                            KeyParams {
                                customization: custom,
                                // 0 on the wire: the algorithm's own tag length.
                                output_len: Some(id_of(output_len) as usize).filter(|&l| l > 0),
                            },
                        )
                        .map_err(|e| e.to_string())
                    })
                    .map(|object| {
                        let mut out = next_id.to_le_bytes().to_vec();
                        out.push(u8::from(object.streams()));
                        objects.insert(next_id, object);
                        next_id += 1;
                        out
                    })
            }
            (OP_TAG, [id, nonce, tag_len, chunks @ ..]) => match objects.get_mut(&id_of(id)) {
                None => Err("unknown object".to_string()),
                Some(object) => {
                    let mut tag = vec![0u8; id_of(tag_len) as usize];
                    let done = if let [msg] = chunks {
                        object.tag_into(nonce, msg, &mut tag)
                    } else {
                        let pieces: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                        object.tag_chunks(nonce, &pieces, &mut tag)
                    };
                    // A refusal travels as the library's reason, never as a tag.
                    done.map(|()| tag).map_err(|refused| refused.reason)
                }
            },
            (OP_FREE, [id]) => {
                objects.remove(&id_of(id));
                continue;
            }
            _ => Err(format!("bad request (op {op}, {} fields)", fields.len())),
        };
        let written = match &reply {
            Ok(data) => write_frame(&mut output, 0, &[data]),
            Err(message) => write_frame(&mut output, 1, &[message.as_bytes()]),
        };
        written.map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The parent's connection to one acceleration's `serve` child (started on first use).
struct Server {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    /// Bumped when a server is replaced, so proxies into a dead one fail instead of hitting a new id.
    generation: u64,
}

/// The `serve` children by acceleration. One lock for all: proxies are for correctness paths only.
static SERVERS: Mutex<BTreeMap<Accel, Server>> = Mutex::new(BTreeMap::new());
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Drop for Server {
    fn drop(&mut self) {
        // Closing stdin ends the child's loop; reap it so no zombie is left.
        let _ = self.input.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Send one request to `accel`'s server and read its reply, starting the server if needed.
fn request(
    accel: Accel,
    generation: Option<u64>,
    op: u8,
    fields: &[&[u8]],
) -> Result<(u64, Option<Vec<u8>>), String> {
    let mut servers = SERVERS.lock().unwrap_or_else(|p| p.into_inner());
    let server = match servers.entry(accel) {
        Entry::Occupied(running) => running.into_mut(),
        Entry::Vacant(_) if generation.is_some() => {
            return Err(format!("the {accel} child has exited"));
        }
        Entry::Vacant(slot) => {
            let mut child = command(super::ChildMode::Serve, accel)?
                .spawn()
                .map_err(|e| format!("cannot start the {accel} child: {e}"))?;
            let input = BufWriter::new(child.stdin.take().expect("piped stdin"));
            let output = BufReader::new(child.stdout.take().expect("piped stdout"));
            slot.insert(Server {
                child,
                input,
                output,
                generation: GENERATION.fetch_add(1, Ordering::Relaxed) + 1,
            })
        }
    };
    if generation.is_some_and(|g| g != server.generation) {
        return Err(format!("the {accel} child has exited"));
    }
    let current = server.generation;
    let io = (|| -> std::io::Result<Option<(u8, Vec<u8>)>> {
        write_frame(&mut server.input, op, fields)?;
        if op == OP_FREE {
            return Ok(None);
        }
        // A reply is a status (0 or 1), one field, and that field no longer than a reply can be:
        // anything else is not macbench answering (`MACBENCH_EXE=/bin/yes` would have been read as
        // a field of ~170 MB, and the read waited on for ever).
        let mut status = [0u8; 1];
        server.output.read_exact(&mut status)?;
        let count = read_u32(&mut server.output)?;
        let len = read_u32(&mut server.output)?;
        if status[0] > 1 || count != 1 || u64::from(len) > super::REPLY_LIMIT {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not a macbench reply",
            ));
        }
        let mut field = vec![0u8; len as usize];
        server.output.read_exact(&mut field)?;
        Ok(Some((status[0], field)))
    })();
    match io {
        Ok(None) => Ok((current, None)),
        Ok(Some((0, data))) => Ok((current, Some(data))),
        Ok(Some((_, message))) => Err(String::from_utf8_lossy(&message).into_owned()),
        Err(e) => {
            // The child died (it prints its reason on stderr), or is not macbench: it is ended,
            // and the next key starts a new one.
            servers.remove(&accel);
            let exe = super::executable_name();
            Err(match e.kind() {
                std::io::ErrorKind::InvalidData => {
                    format!("{accel} child {exe}: {e}; {}", super::EXPECTED_REPLY)
                }
                _ => format!("{accel} child: {e}"),
            })
        }
    }
}

/// A keyed object living in its acceleration's `serve` child. For correctness paths only (self-test,
/// `tag`, tests): every message is a pipe round trip.
pub struct Proxy {
    accel: Accel,
    id: u64,
    generation: u64,
    streams: bool,
}

impl Proxy {
    /// Key `function` in its acceleration's `serve` child (starting it if needed).
    pub(super) fn new(
        function: &Function,
        key: &[u8],
        params: KeyParams<'_>,
    ) -> Result<Proxy, MacError> {
        let error = |reason: String| MacError::Backend {
            backend: function.backend.name,
            algorithm: function.algorithm.name,
            reason,
        };
        let accel = function.accel;
        let function = function.id();
        let (generation, reply) = request(
            accel,
            None,
            OP_KEY,
            &[
                function.as_bytes(),
                key,
                params.customization,
                &(params.output_len.unwrap_or(0) as u64).to_le_bytes(),
            ],
        )
        .map_err(error)?;
        let reply = reply.unwrap_or_default();
        if reply.len() != 9 {
            return Err(error(format!("{accel} child: malformed key reply")));
        }
        Ok(Proxy {
            accel,
            id: id_of(&reply[..8]),
            generation,
            streams: reply[8] == 1,
        })
    }

    fn tag(&self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        let id = self.id.to_le_bytes();
        let tag_len = (tag.len() as u32).to_le_bytes();
        let mut fields: Vec<&[u8]> = vec![&id, nonce, &tag_len];
        fields.extend_from_slice(chunks);
        let len = chunks.iter().map(|c| c.len()).sum();
        match request(self.accel, Some(self.generation), OP_TAG, &fields) {
            Ok((_, Some(t))) if t.len() == tag.len() => {
                tag.copy_from_slice(&t);
                Ok(())
            }
            Ok((_, reply)) => Err(Refused::message(
                len,
                format!(
                    "the {} child answered {} bytes for a {}-byte tag",
                    self.accel,
                    reply.map_or(0, |t| t.len()),
                    tag.len()
                ),
            )),
            // The library's reason, from the child (or why the child could not answer).
            Err(reason) => Err(Refused::message(len, reason)),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = request(
            self.accel,
            Some(self.generation),
            OP_FREE,
            &[&self.id.to_le_bytes()],
        );
    }
}

impl KeyedMac for Proxy {
    fn tag_into(&mut self, nonce: &[u8], msg: &[u8], tag: &mut [u8]) -> TagResult {
        self.tag(nonce, &[msg], tag)
    }

    fn tag_chunks(&mut self, nonce: &[u8], chunks: &[&[u8]], tag: &mut [u8]) -> TagResult {
        self.tag(nonce, chunks, tag)
    }

    fn streams(&self) -> bool {
        self.streams
    }
}
