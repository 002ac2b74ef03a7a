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

/// `UDP_SEGMENT` and `UDP_GRO` (linux/udp.h, since Linux 4.18 and 5.0), level `SOL_UDP`.
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;
/// Most segments one GSO send may carry (the kernel's `UDP_MAX_SEGMENTS`, 64 before Linux 6.7).
pub const MAX_GSO_SEGMENTS: usize = 64;
/// Most UDP payload bytes one GSO send may carry (one IPv4 datagram's worth).
const MAX_GSO_BYTES: usize = 65_507;
/// Control-message room per message, in 8-byte words: one `cmsghdr` and an int, with room to spare.
const CONTROL_WORDS: usize = 8;

/// Turn a UDP offload on for `socket` (`UDP_SEGMENT` on the sender, `UDP_GRO` on the receiver), so a
/// kernel that does not offer it says so before the trial instead of failing every send silently.
fn set_udp_option(socket: &UdpSocket, option: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: valid socket fd, a c_int option value of the stated length.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_UDP,
            option,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Ask for UDP GSO on a sending socket; an error names the flag and what the kernel said.
pub fn enable_gso(socket: &UdpSocket) -> Result<(), String> {
    // The socket-wide segment size is 0 (off): each send carries its own in a control message.
    set_udp_option(socket, UDP_SEGMENT, 0)
        .map_err(|e| format!("--gso: the kernel refuses UDP_SEGMENT (UDP GSO) on this socket: {e}"))
}

/// Ask for UDP GRO on a receiving socket; an error names the flag and what the kernel said.
pub fn enable_gro(socket: &UdpSocket) -> Result<(), String> {
    set_udp_option(socket, UDP_GRO, 1)
        .map_err(|e| format!("--gro: the kernel refuses UDP_GRO on this socket: {e}"))
}

/// Switch UDP GRO off again (a socket reused for another trial).
pub fn disable_gro(socket: &UdpSocket) -> io::Result<()> {
    set_udp_option(socket, UDP_GRO, 0)
}

/// What the command line asks of one UDP offload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadWish {
    /// On when the kernel takes it, off (and said so) when it does not: the default.
    IfOffered,
    /// On, and an error if the kernel refuses it (`--gso`, `--gro`).
    Required,
    /// Off (`--no-gso`, `--no-gro`).
    Off,
}

/// The UDP offloads a run uses, and a line that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offloads {
    pub gso: bool,
    pub gro: bool,
    /// `UDP GSO and GRO on (the kernel takes them)`, or what is off and why.
    pub description: String,
}

/// Decide the offloads: each one asked for (or left to its default) is tried on a loopback socket
/// of this kernel, so a kernel without it falls back to plain batching *and says so*, unless the
/// flag demanded it.
pub fn choose_offloads(gso: OffloadWish, gro: OffloadWish) -> Result<Offloads, String> {
    let probe = UdpSocket::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| format!("a UDP socket to try UDP GSO and GRO on: {e}"))?;
    let mut notes = Vec::new();
    let mut decide = |name: &str, flags: [&str; 2], wish: OffloadWish, option: libc::c_int| {
        let [required, off] = flags;
        if wish == OffloadWish::Off {
            notes.push(format!("{name} off ({off})"));
            return Ok(false);
        }
        match (
            wish,
            set_udp_option(&probe, option, i32::from(option == UDP_GRO)),
        ) {
            (_, Ok(())) => Ok(true),
            (OffloadWish::Required, Err(e)) => Err(format!(
                "{required}: the kernel refuses {name} on this socket: {e}"
            )),
            (_, Err(e)) => {
                notes.push(format!("{name} off: the kernel refuses it ({e})"));
                Ok(false)
            }
        }
    };
    let gso = decide("UDP GSO", ["--gso", "--no-gso"], gso, UDP_SEGMENT)?;
    let gro = decide("UDP GRO", ["--gro", "--no-gro"], gro, UDP_GRO)?;
    let on = match (gso, gro) {
        (true, true) => "UDP GSO and GRO on",
        (true, false) => "UDP GSO on",
        (false, true) => "UDP GRO on",
        (false, false) => "",
    };
    let description = if notes.is_empty() {
        format!("{on} (the kernel takes them)")
    } else if on.is_empty() {
        notes.join("; ")
    } else {
        format!("{on}; {}", notes.join("; "))
    };
    Ok(Offloads {
        gso,
        gro,
        description,
    })
}

fn zeroed_header() -> libc::mmsghdr {
    // SAFETY: mmsghdr is plain data (pointers, lengths, flags); all zeros is a valid value, the one
    // C code starts from (no name, no control data).
    unsafe { std::mem::zeroed() }
}

/// Sends [`Slots`] on a connected socket, `batch` messages per call; with GSO, a message carries a
/// run of up to [`MAX_GSO_SEGMENTS`] consecutive datagrams of equal length, which the kernel cuts
/// into separate datagrams (`UDP_SEGMENT`).
pub struct BatchSender {
    batch: usize,
    gso: bool,
    /// One iovec per datagram of the step; a message points at a run of them.
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    control: Vec<u64>,
    /// Per message: its first datagram and how many it carries.
    runs: Vec<(usize, usize)>,
    /// System calls made, for packets per call in the report.
    pub calls: u64,
}

impl BatchSender {
    /// `batch` 1 without GSO sends with `send`, one call per datagram (the unbatched path).
    pub fn new(batch: usize, gso: bool) -> BatchSender {
        BatchSender {
            batch: batch.clamp(1, MAX_BATCH),
            gso,
            iov: Vec::new(),
            hdrs: Vec::new(),
            control: Vec::new(),
            runs: Vec::new(),
            calls: 0,
        }
    }

    /// Cut the step into messages: single datagrams, or with GSO runs of equal length.
    fn plan_runs(&mut self, slots: &Slots) {
        self.runs.clear();
        let mut i = 0;
        while i < slots.len() {
            let len = slots.lens[i];
            let mut k = 1;
            if self.gso {
                while i + k < slots.len()
                    && slots.lens[i + k] == len
                    && k < MAX_GSO_SEGMENTS
                    && (k + 1) * len <= MAX_GSO_BYTES
                {
                    k += 1;
                }
            }
            self.runs.push((i, k));
            i += k;
        }
    }

    /// Point one iovec at each datagram and one header at each run (with its segment size when it
    /// holds more than one datagram).
    fn point(&mut self, slots: &mut Slots) {
        let n = slots.len();
        if self.iov.len() < n {
            let empty = libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            };
            self.iov.resize(n, empty);
            self.hdrs.resize(n, zeroed_header());
            self.control.resize(n * CONTROL_WORDS, 0);
        }
        let stride = slots.stride;
        for j in 0..n {
            self.iov[j] = libc::iovec {
                iov_base: slots.bytes[j * stride..].as_mut_ptr().cast(),
                iov_len: slots.lens[j],
            };
        }
        for (m, &(first, k)) in self.runs.iter().enumerate() {
            let hdr = &mut self.hdrs[m];
            *hdr = zeroed_header();
            hdr.msg_hdr.msg_iov = &mut self.iov[first];
            hdr.msg_hdr.msg_iovlen = k as _;
            if k > 1 {
                let control = &mut self.control[m * CONTROL_WORDS..(m + 1) * CONTROL_WORDS];
                let segment = slots.lens[first] as u16;
                // SAFETY: `control` is CONTROL_WORDS·8 bytes, aligned for cmsghdr, more than
                // CMSG_SPACE(2); CMSG_FIRSTHDR of a msghdr whose control is that buffer points into
                // it, and CMSG_DATA has room for the u16 segment size.
                unsafe {
                    hdr.msg_hdr.msg_control = control.as_mut_ptr().cast();
                    hdr.msg_hdr.msg_controllen = libc::CMSG_SPACE(2) as _;
                    let cmsg = libc::CMSG_FIRSTHDR(&hdr.msg_hdr);
                    (*cmsg).cmsg_level = libc::SOL_UDP;
                    (*cmsg).cmsg_type = UDP_SEGMENT;
                    (*cmsg).cmsg_len = libc::CMSG_LEN(2) as _;
                    std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<u16>(), segment);
                }
            }
        }
    }

    /// Send every datagram of `slots` in order; `failed(i)` is called, in increasing order, for each
    /// datagram the kernel refused (ENOBUFS, ECONNREFUSED from an earlier ICMP, …; every datagram of
    /// a refused GSO message), which is then skipped, as `send`'s error would be.
    pub fn send(&mut self, socket: &UdpSocket, slots: &mut Slots, mut failed: impl FnMut(usize)) {
        if self.batch == 1 && !self.gso {
            for i in 0..slots.len() {
                self.calls += 1;
                if socket.send(slots.get(i)).is_err() {
                    failed(i);
                }
            }
            return;
        }
        self.plan_runs(slots);
        self.point(slots);
        let mut next = 0;
        while next < self.runs.len() {
            let n = (self.runs.len() - next).min(self.batch);
            self.calls += 1;
            // SAFETY: valid fd; headers next..next+n each point at their run's iovecs, which point
            // at readable bytes inside `slots.bytes`, borrowed (and not moved) for the whole call,
            // and at their own control buffer.
            let sent = unsafe {
                libc::sendmmsg(
                    socket.as_raw_fd(),
                    self.hdrs[next..].as_mut_ptr(),
                    n as libc::c_uint,
                    0,
                )
            };
            if sent > 0 {
                next += sent as usize;
            } else if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                // The first message of the call was refused: count its datagrams, go on.
                let (first, k) = self.runs[next];
                (first..first + k).for_each(&mut failed);
                next += 1;
            }
        }
    }
}

/// Receives up to `batch` datagrams per call into slots of [`RECEIVE_SLOT`] bytes; with GRO, a slot
/// may hold several datagrams the kernel coalesced, cut apart here by the segment size it reports.
pub struct BatchReceiver {
    bytes: Vec<u8>,
    capacity: usize,
    gro: bool,
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    control: Vec<u64>,
    /// Start and length of each datagram of the last receive.
    segments: Vec<(usize, usize)>,
    /// System calls that returned datagrams.
    pub calls: u64,
}

impl BatchReceiver {
    /// `batch` 1 without GRO receives with `recv`, one call per datagram (the unbatched path).
    pub fn new(batch: usize, gro: bool) -> BatchReceiver {
        let capacity = batch.clamp(1, MAX_BATCH);
        let empty = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        BatchReceiver {
            bytes: vec![0u8; capacity * RECEIVE_SLOT],
            capacity,
            gro,
            iov: vec![empty; capacity],
            hdrs: vec![zeroed_header(); capacity],
            control: vec![0u64; capacity * CONTROL_WORDS],
            segments: Vec::with_capacity(capacity),
            calls: 0,
        }
    }

    /// Wait for at least one datagram (up to the socket's read timeout), then take what else is
    /// queued, up to the batch. Returns how many datagrams arrived (GRO's coalesced ones counted
    /// one by one); read them with [`BatchReceiver::datagram`].
    pub fn receive(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        self.segments.clear();
        if self.capacity == 1 && !self.gro {
            let n = socket.recv(&mut self.bytes[..RECEIVE_SLOT])?;
            self.segments.push((0, n));
            self.calls += 1;
            return Ok(1);
        }
        for k in 0..self.capacity {
            self.iov[k] = libc::iovec {
                iov_base: self.bytes[k * RECEIVE_SLOT..].as_mut_ptr().cast(),
                iov_len: RECEIVE_SLOT,
            };
            let hdr = &mut self.hdrs[k];
            *hdr = zeroed_header();
            hdr.msg_hdr.msg_iov = &mut self.iov[k];
            hdr.msg_hdr.msg_iovlen = 1;
            if self.gro {
                hdr.msg_hdr.msg_control = self.control[k * CONTROL_WORDS..].as_mut_ptr().cast();
                hdr.msg_hdr.msg_controllen = (CONTROL_WORDS * 8) as _;
            }
        }
        // SAFETY: valid fd; `capacity` headers, each pointing at one iovec of RECEIVE_SLOT writable
        // bytes inside `self.bytes` and (with GRO) at its own control buffer, all borrowed mutably
        // for the whole call; no timeout pointer (the socket's SO_RCVTIMEO bounds the wait for the
        // first datagram, MSG_WAITFORONE the rest).
        let got = unsafe {
            libc::recvmmsg(
                socket.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                self.capacity as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            return Err(io::Error::last_os_error());
        }
        self.calls += 1;
        for k in 0..got as usize {
            let len = self.hdrs[k].msg_len as usize;
            let segment = self.gro_segment(k).filter(|&g| g > 0).unwrap_or(len.max(1));
            let start = k * RECEIVE_SLOT;
            let mut offset = 0;
            loop {
                let take = segment.min(len - offset);
                self.segments.push((start + offset, take));
                offset += take;
                if offset >= len {
                    break;
                }
            }
        }
        Ok(self.segments.len())
    }

    /// The segment size GRO reported for message `k` of the last call, if it coalesced any.
    fn gro_segment(&self, k: usize) -> Option<usize> {
        if !self.gro {
            return None;
        }
        let hdr = &self.hdrs[k].msg_hdr;
        // SAFETY: the kernel wrote msg_controllen bytes of well-formed control messages into this
        // header's control buffer; CMSG_FIRSTHDR/CMSG_NXTHDR stay inside it, and an int is read
        // (unaligned) only from a UDP_GRO message, whose data is one int.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(hdr);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_UDP && (*cmsg).cmsg_type == UDP_GRO {
                    let size =
                        std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>());
                    return usize::try_from(size).ok();
                }
                cmsg = libc::CMSG_NXTHDR(hdr, cmsg);
            }
        }
        None
    }

    /// Datagram `i` of the last [`BatchReceiver::receive`].
    pub fn datagram(&self, i: usize) -> &[u8] {
        let (start, len) = self.segments[i];
        &self.bytes[start..start + len]
    }
}

/// Set a `SOL_SOCKET` option that takes a C int.
pub fn set_socket_int(
    fd: std::os::fd::RawFd,
    option: libc::c_int,
    value: libc::c_int,
) -> std::io::Result<()> {
    // SAFETY: `value` is a c_int of the stated length that outlives the call; an invalid fd or
    // option only makes the call fail.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            option,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Read a `SOL_SOCKET` option that is a C int.
pub fn socket_int(fd: std::os::fd::RawFd, option: libc::c_int) -> std::io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: value and len point to writable memory of the stated size; an invalid fd or option
    // only makes the call fail.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(value)
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
            let mut sender = BatchSender::new(batch, false);
            let mut failures = 0;
            sender.send(&tx, &mut slots, |_| failures += 1);
            assert_eq!(failures, 0);
            assert_eq!(sender.calls, 20u64.div_ceil(batch as u64), "batch {batch}");
            let mut receiver = BatchReceiver::new(batch, false);
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

    /// Switched off is off, whatever the kernel offers, and said so; left to the kernel, an offload is
    /// on or its absence is explained; required, it is on or an error naming the flag.
    #[test]
    fn offloads_are_chosen_and_explained() {
        use OffloadWish::*;
        let off = choose_offloads(Off, Off).unwrap();
        assert!(!off.gso && !off.gro);
        assert_eq!(
            off.description,
            "UDP GSO off (--no-gso); UDP GRO off (--no-gro)"
        );
        let auto = choose_offloads(IfOffered, IfOffered).unwrap();
        let (tx, _) = pair();
        let kernel_gso = enable_gso(&tx).is_ok();
        assert_eq!(auto.gso, kernel_gso);
        assert_eq!(auto.gro, enable_gro(&tx).is_ok());
        if auto.gso && auto.gro {
            assert_eq!(
                auto.description,
                "UDP GSO and GRO on (the kernel takes them)"
            );
        } else {
            assert!(
                auto.description.contains("the kernel refuses it"),
                "{auto:?}"
            );
        }
        match choose_offloads(Required, Off) {
            Ok(o) => assert!(kernel_gso && o.gso && !o.gro && o.description.contains("(--no-gro)")),
            Err(e) => assert!(!kernel_gso && e.starts_with("--gso: "), "{e}"),
        }
    }
}
