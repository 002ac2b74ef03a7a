//! Batched datagram I/O: `sendmmsg(2)` and `recvmmsg(2)`, many datagrams per system call.
//!
//! At small packets a UDP socket's cost is mostly the system call, not the bytes: one `send` per
//! packet caps a sender near a quarter of a million 64-byte packets per second on the development VM,
//! and the receiver then never sees more than that, so the MAC's zero-loss rate is never reached. Lab
//! packet generators (TRex, pktgen, MoonGen) batch for this reason. `sendmmsg`/`recvmmsg` hand the
//! kernel up to [`MAX_BATCH`] datagrams per call; each stays its own UDP datagram on the wire, so the
//! receiver's per-packet work (parse, anti-replay, verify, count) is unchanged.
//!
//! A batch of 1 keeps the one-call-per-packet path (`send`/`recv`), so the effect of batching is
//! measured by the same program with one flag changed (`--batch 1`).
//!
//! Datagrams live in [`Slots`]: one buffer cut into fixed-size slots, allocated once per trial, so
//! packets are built in place and nothing is allocated per packet. The `unsafe` of this module is the
//! two system calls and the zeroed headers they take.

use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// Most datagrams per call: the kernel's `UIO_MAXIOV`, the largest `vlen` `sendmmsg` takes.
pub const MAX_BATCH: usize = 1024;
/// Datagrams per call unless `--batch` says otherwise: past a few dozen the call's cost is spread
/// thin and bigger batches only make bursts longer.
pub const DEFAULT_BATCH: usize = 32;
/// Bytes of a receive slot: the largest UDP payload over IPv4 or IPv6 without jumbograms, plus one so
/// a datagram that filled it would show as longer than any sender sends.
pub const RECEIVE_SLOT: usize = 65_536;

/// Datagrams in one buffer, one per fixed-size slot, with their lengths.
pub struct Slots {
    bytes: Vec<u8>,
    stride: usize,
    lens: Vec<usize>,
}

impl Slots {
    /// `capacity` slots of `stride` bytes each (both at least 1).
    pub fn new(capacity: usize, stride: usize) -> Slots {
        let (capacity, stride) = (capacity.max(1), stride.max(1));
        Slots {
            bytes: vec![0u8; capacity * stride],
            stride,
            lens: Vec::with_capacity(capacity),
        }
    }

    pub fn capacity(&self) -> usize {
        self.bytes.len() / self.stride
    }

    /// Datagrams held.
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.lens.len() == self.capacity()
    }

    pub fn clear(&mut self) {
        self.lens.clear();
    }

    /// Datagram `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = i * self.stride;
        &self.bytes[start..start + self.lens[i]]
    }

    /// The next free slot, whole: write a datagram into it and then [`Slots::commit`] its length.
    /// Call only when not full.
    pub fn next_free(&mut self) -> &mut [u8] {
        let start = self.lens.len() * self.stride;
        &mut self.bytes[start..start + self.stride]
    }

    /// Keep the first `len` bytes of the slot [`Slots::next_free`] returned as the next datagram.
    pub fn commit(&mut self, len: usize) {
        self.lens.push(len.min(self.stride));
    }

    /// Append a copy of the first `len` bytes of datagram `i` (a replay, a truncation).
    pub fn push_prefix_of(&mut self, i: usize, len: usize) {
        let len = len.min(self.lens[i]);
        let (from, to) = (i * self.stride, self.lens.len() * self.stride);
        self.bytes.copy_within(from..from + len, to);
        self.lens.push(len);
    }

    /// Append a copy of `datagram` (at most one slot of it).
    pub fn push_copy(&mut self, datagram: &[u8]) {
        let len = datagram.len().min(self.stride);
        self.next_free()[..len].copy_from_slice(&datagram[..len]);
        self.lens.push(len);
    }
}

/// The headers `sendmmsg`/`recvmmsg` take, one per datagram, reused from call to call. Their
/// pointers into [`Slots`] are written just before each call, so they never outlive the borrow.
struct Headers {
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl Headers {
    fn new(n: usize) -> Headers {
        let iov = vec![
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            };
            n
        ];
        // SAFETY: mmsghdr is plain data (pointers, lengths, flags); all zeros is a valid value, the
        // one C code starts from (no name, no control data).
        let zero: libc::mmsghdr = unsafe { std::mem::zeroed() };
        Headers {
            iov,
            hdrs: vec![zero; n],
        }
    }

    /// Point header `k` at `len` bytes at `base` (its only iovec).
    fn point(&mut self, k: usize, base: *mut u8, len: usize) {
        self.iov[k] = libc::iovec {
            iov_base: base.cast(),
            iov_len: len,
        };
        let hdr = &mut self.hdrs[k];
        hdr.msg_hdr.msg_iov = &mut self.iov[k];
        hdr.msg_hdr.msg_iovlen = 1;
        hdr.msg_len = 0;
        hdr.msg_hdr.msg_flags = 0;
    }
}

/// Sends [`Slots`] on a connected socket, `batch` datagrams per call.
pub struct BatchSender {
    batch: usize,
    headers: Headers,
    /// System calls made, for packets per call in the report.
    pub calls: u64,
}

impl BatchSender {
    /// `batch` 1 sends with `send`, one call per datagram (the unbatched path).
    pub fn new(batch: usize) -> BatchSender {
        let batch = batch.clamp(1, MAX_BATCH);
        BatchSender {
            batch,
            headers: Headers::new(if batch > 1 { batch } else { 0 }),
            calls: 0,
        }
    }

    /// Send every datagram of `slots` in order; `failed(i)` is called for each datagram the kernel
    /// refused (ENOBUFS, ECONNREFUSED from an earlier ICMP, …), which is then skipped, as `send`'s
    /// error would be.
    pub fn send(&mut self, socket: &UdpSocket, slots: &mut Slots, mut failed: impl FnMut(usize)) {
        if self.batch == 1 {
            for i in 0..slots.len() {
                self.calls += 1;
                if socket.send(slots.get(i)).is_err() {
                    failed(i);
                }
            }
            return;
        }
        let mut next = 0;
        while next < slots.len() {
            let n = (slots.len() - next).min(self.batch);
            for k in 0..n {
                let (start, len) = ((next + k) * slots.stride, slots.lens[next + k]);
                self.headers
                    .point(k, slots.bytes[start..].as_mut_ptr(), len);
            }
            self.calls += 1;
            // SAFETY: valid fd; `n` headers, each pointing at one iovec of `len` readable bytes
            // inside `slots.bytes`, which is borrowed (and not moved) for the whole call.
            let sent = unsafe {
                libc::sendmmsg(
                    socket.as_raw_fd(),
                    self.headers.hdrs.as_mut_ptr(),
                    n as libc::c_uint,
                    0,
                )
            };
            if sent > 0 {
                next += sent as usize;
            } else if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                // The first datagram of the call was refused: count it and go on with the next.
                failed(next);
                next += 1;
            }
        }
    }
}

/// Receives up to `batch` datagrams per call into slots of [`RECEIVE_SLOT`] bytes.
pub struct BatchReceiver {
    slots: Slots,
    headers: Headers,
    /// System calls that returned datagrams.
    pub calls: u64,
}

impl BatchReceiver {
    /// `batch` 1 receives with `recv`, one call per datagram (the unbatched path).
    pub fn new(batch: usize) -> BatchReceiver {
        let batch = batch.clamp(1, MAX_BATCH);
        BatchReceiver {
            slots: Slots::new(batch, RECEIVE_SLOT),
            headers: Headers::new(if batch > 1 { batch } else { 0 }),
            calls: 0,
        }
    }

    /// Wait for at least one datagram (up to the socket's read timeout), then take what else is
    /// queued, up to the batch. Returns how many arrived; read them with [`BatchReceiver::datagram`].
    pub fn receive(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        self.slots.clear();
        if self.slots.capacity() == 1 {
            let n = socket.recv(self.slots.next_free())?;
            self.slots.commit(n);
            self.calls += 1;
            return Ok(1);
        }
        let capacity = self.slots.capacity();
        for k in 0..capacity {
            let base = self.slots.bytes[k * RECEIVE_SLOT..].as_mut_ptr();
            self.headers.point(k, base, RECEIVE_SLOT);
        }
        // SAFETY: valid fd; `capacity` headers, each pointing at one iovec of RECEIVE_SLOT writable
        // bytes inside `slots.bytes`, borrowed mutably for the whole call; no timeout pointer (the
        // socket's SO_RCVTIMEO bounds the wait for the first datagram, MSG_WAITFORONE the rest).
        let got = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                self.headers.hdrs.as_mut_ptr(),
                capacity as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            return Err(io::Error::last_os_error());
        }
        self.calls += 1;
        for k in 0..got as usize {
            self.slots.commit(self.headers.hdrs[k].msg_len as usize);
        }
        Ok(got as usize)
    }

    /// Datagram `i` of the last [`BatchReceiver::receive`].
    pub fn datagram(&self, i: usize) -> &[u8] {
        self.slots.get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pair() -> (UdpSocket, UdpSocket) {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        (tx, rx)
    }

    #[test]
    fn slots_hold_copies_and_prefixes() {
        let mut s = Slots::new(4, 8);
        s.next_free()[..3].copy_from_slice(b"abc");
        s.commit(3);
        s.push_prefix_of(0, 2);
        s.push_copy(b"0123456789");
        assert_eq!(s.get(0), b"abc");
        assert_eq!(s.get(1), b"ab");
        assert_eq!(s.get(2), b"01234567", "cut at the slot");
        assert!(!s.is_full());
        s.push_copy(b"");
        assert!(s.is_full() && s.len() == 4);
        s.clear();
        assert!(s.is_empty());
    }

    /// Every batch size, the unbatched one included, delivers each datagram once, whole, in order
    /// (loopback does not reorder).
    #[test]
    fn batches_arrive_whole_and_in_order() {
        for batch in [1, 2, 7, 32] {
            let (tx, rx) = pair();
            let mut slots = Slots::new(20, 100);
            for i in 0..20u8 {
                slots.push_copy(&vec![i; usize::from(i) + 1]);
            }
            let mut sender = BatchSender::new(batch);
            let mut failures = 0;
            sender.send(&tx, &mut slots, |_| failures += 1);
            assert_eq!(failures, 0);
            assert_eq!(sender.calls, 20u64.div_ceil(batch as u64), "batch {batch}");
            let mut receiver = BatchReceiver::new(batch);
            let mut seen = Vec::new();
            while seen.len() < 20 {
                let n = receiver.receive(&rx).unwrap();
                assert!((1..=batch).contains(&n));
                seen.extend((0..n).map(|i| receiver.datagram(i).to_vec()));
            }
            for (i, d) in seen.iter().enumerate() {
                assert_eq!(d, &vec![i as u8; i + 1], "batch {batch}");
            }
        }
    }
}
