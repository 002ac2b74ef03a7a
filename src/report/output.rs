//! Output files: nothing lost, nothing clobbered.
//!
//! The rules, for every file macbench writes (`run --json/--csv`, `model --json/--csv`, `report -o`,
//! `report --png`, `net --json/--csv`, `compare` and `diff --json/--csv`):
//!
//! - `-` is standard output, and so is any path that names it (`/dev/stdout`, `/dev/fd/1`,
//!   `/proc/self/fd/1`) or is the very file it has open (`--json so.json > so.json`): such an output is
//!   written to descriptor 1 itself, once, at the end, and never replaced by a rename — a rename would
//!   put the results on a new inode the shell's descriptor no longer points to (they were lost), and
//!   `>>`'s earlier contents with them. Likewise `/dev/fd/N` is descriptor N of this process.
//! - A regular file, or a path that does not exist yet, is written to a temporary sibling and renamed
//!   into place: a reader (or a crash) never sees half a file.
//! - Anything else is written *through*, never replaced: a character device (`/dev/null`, `/dev/full`) or
//!   a FIFO stays what it is; a symbolic link is resolved and the rule applied to its target, so the link
//!   survives and the file it points to is the one updated.
//! - Before any work starts, [`prepare`] refuses an output that cannot be written, that is also an input
//!   or another output, or that another macbench is writing (advisory lock, held until the guard drops).
//!   An output that is standard output by another name (`/dev/stdout`) moves printed lines to standard
//!   error, as `-` does.
//! - A file the user did not name (bare `macbench`'s `macbench-results.json`) is not lost: the CLI
//!   keeps it under a dated name first ([`keep_dated`]); which files are kept, refused or replaced is
//!   docs/robustness.md's table.
//!
//! The lock is `flock` on a sibling `.NAME.lock`, not on the output itself: the output's inode is
//! replaced by every rename, so a lock on it would protect only the first version of the file.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The lock and temporary files this process has made and not yet removed: what a signal that ends
/// the process must remove ([`remove_live_files_before_exit`]).
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The list of live files. A thread that panicked while holding it left a list that is still right
/// (each change is one push or one retain), so a poisoned lock is used as it is.
fn live_files() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn live(path: &Path) {
    live_files().push(path.to_path_buf());
}

fn gone(path: &Path) {
    live_files().retain(|p| p != path);
}

/// Remove every lock and temporary file this process holds, for a process about to end before its
/// guards drop (SIGINT, SIGTERM, SIGHUP, a closed standard output), so it leaves nothing behind. The
/// list stays held until the process ends: a thread about to make a lock or temporary file waits
/// for it rather than make one after this removal and before the exit (a SIGTERM while `model`
/// locked its output left the lock behind that way).
pub fn remove_live_files_before_exit() {
    let mut listed = live_files();
    for path in listed.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    std::mem::forget(listed);
}

/// Why an output path is refused before anything runs. Each names the flag and the path.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{flag} {path}: directory {dir} does not exist")]
    NoDirectory {
        flag: String,
        path: String,
        dir: String,
    },
    #[error("{flag} {path}: is a directory; give a file name")]
    IsDirectory { flag: String, path: String },
    #[error("{flag} {path}: cannot write there ({reason})")]
    NotWritable {
        flag: String,
        path: String,
        reason: String,
    },
    #[error("{flag} {path}: is also {other}; give a different output file")]
    Same {
        flag: String,
        path: String,
        other: String,
    },
    #[error("{flag} {path}: another macbench is writing it (lock {lock} is held); wait or choose another file")]
    Locked {
        flag: String,
        path: String,
        lock: String,
    },
    /// Something that is not a macbench lock sits where the lock goes: taken over it would be deleted
    /// when the lock is released (a user's file), or block (a FIFO), or lock nothing (a link).
    #[error("{flag} {path}: its lock {lock} is {what}, not a macbench lock file; it is left as it is: move it away")]
    NotALock {
        flag: String,
        path: String,
        lock: String,
        what: String,
    },
}

/// What a macbench lock file holds once taken: a stale one (left by a process killed with SIGKILL)
/// is recognised by it and taken over; any other content is a user's file and is never deleted.
const LOCK_MARK: &str = "macbench lock";

/// What the file at `path` is, for a refusal, when it is anything but a regular file.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_symlink() {
        Some("a symbolic link")
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("a device")
    }
}

/// Whether `path` means standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Whether `path` is a stream rather than a file to replace: standard output (`-`), or an existing
/// device, FIFO or socket (`/dev/stdout`, `/dev/null`, a pipe), symlinks followed. A stream takes one
/// document, at the end (a rewrite after every scenario would concatenate documents), and no sibling
/// file is derived from its name (`--csv /dev/null` must not create `/dev/null-threads`).
pub fn is_stream(path: &Path) -> bool {
    match kind(path) {
        Ok(Kind::Descriptor(_)) => true,
        // A dangling link is written through, creating a file: not a stream.
        Ok(Kind::Through(target)) => {
            std::fs::metadata(target).is_ok_and(|m| !m.is_file() && !m.is_dir())
        }
        _ => false,
    }
}

/// How a path is to be written.
enum Kind {
    /// Temporary sibling of this path (the target itself, symlinks resolved), then rename.
    Replace(PathBuf),
    /// Open this existing non-regular file and write into it.
    Through(PathBuf),
    /// A descriptor this process already has open (1 for standard output): written through that
    /// descriptor, so its offset and `O_APPEND` are the ones the shell set up.
    Descriptor(i32),
}

/// The descriptor of this process that `path` names, if it names one: `/dev/stdin`, `/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N`, `/proc/PID/fd/N` with
/// this process's PID, or a symbolic link to any of them. Read from the names, not by opening: the
/// kernel's `/proc/self/fd/N` links resolve to the file itself, and a rename over that file is what
/// lost the results.
fn named_descriptor(path: &Path) -> Option<i32> {
    let own = format!("/proc/{}/fd/", std::process::id());
    let mut current = path.to_path_buf();
    // At most as many links as the kernel follows (40): a loop of links names no descriptor.
    for _ in 0..40 {
        let text = current.to_string_lossy();
        let text = text.trim_end_matches('/');
        match text {
            "/dev/stdin" => return Some(0),
            "/dev/stdout" => return Some(1),
            "/dev/stderr" => return Some(2),
            _ => {}
        }
        let number = [
            "/dev/fd/",
            "/proc/self/fd/",
            "/proc/thread-self/fd/",
            own.as_str(),
        ]
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix));
        if let Some(fd) = number.and_then(|n| n.parse::<i32>().ok()) {
            return Some(fd);
        }
        let link = std::fs::read_link(&current).ok()?;
        current = if link.is_absolute() {
            link
        } else {
            parent_of(&current).join(link)
        };
    }
    None
}

fn kind(path: &Path) -> std::io::Result<Kind> {
    if is_stdout(path) {
        return Ok(Kind::Descriptor(1));
    }
    if let Some(fd) = named_descriptor(path) {
        return Ok(Kind::Descriptor(fd));
    }
    // The file standard output has open, by its own name (`--json so.json > so.json`): replacing it
    // would leave the shell's descriptor on the old inode.
    if is_standard_output(path) {
        return Ok(Kind::Descriptor(1));
    }
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
            Ok(t) => t,
            // A dangling link: writing through it creates the file it names.
            Err(_) => return Ok(Kind::Through(path.to_path_buf())),
        },
        Ok(_) => path.to_path_buf(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Kind::Replace(path.into()))
        }
        Err(e) => return Err(e),
    };
    match std::fs::metadata(&target) {
        Ok(m) if m.is_file() => Ok(Kind::Replace(target)),
        Ok(m) if m.is_dir() => Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        Ok(_) => Ok(Kind::Through(target)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Kind::Replace(target)),
        Err(e) => Err(e),
    }
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Write `bytes` to `path` by the rules in the module docs. The error is one line naming the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let shown = |e: std::io::Error| format!("{}: {e}", path.display());
    match kind(path).map_err(shown)? {
        Kind::Descriptor(1) => {
            crate::stdio::write_stdout(bytes).map_err(|e| format!("standard output: {e}"))
        }
        Kind::Descriptor(fd) => {
            let result = (|| {
                let mut f = File::from(crate::system::kernel::duplicate_fd(fd)?);
                f.write_all(bytes)?;
                f.flush()
            })();
            result.map_err(shown)
        }
        Kind::Through(target) => {
            let result = (|| {
                let mut f = open_through(&target)?;
                f.write_all(bytes)?;
                f.flush()
            })();
            result.map_err(shown)
        }
        Kind::Replace(target) => replace(&target, bytes).map_err(shown),
    }
}

/// How long a FIFO output may wait for a reader before the write fails.
pub const FIFO_READER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Open a non-regular output for writing. A FIFO is opened without blocking and retried until a
/// reader has it open, for at most [`FIFO_READER_WAIT`]: a plain open would wait for a reader forever,
/// and Ctrl-C could not end it.
fn open_through(target: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let fifo = std::fs::metadata(target).is_ok_and(|m| m.file_type().is_fifo());
    if !fifo {
        return OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(target);
    }
    let start = std::time::Instant::now();
    loop {
        match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(target)
        {
            Ok(f) => {
                // Blocking writes from here: a full pipe waits for its reader like any pipe.
                crate::system::kernel::clear_nonblocking(&f);
                return Ok(f);
            }
            // ENXIO: no process has the FIFO open for reading (yet).
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if start.elapsed() >= FIFO_READER_WAIT {
                    return Err(std::io::Error::other(format!(
                        "a FIFO no process read within {} s",
                        FIFO_READER_WAIT.as_secs()
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
}

fn replace(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = target
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?
        .to_string_lossy();
    let tmp = parent_of(target).join(format!(".{name}.{}.tmp", std::process::id()));
    live(&tmp);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        // Keep the permissions of the file being replaced (a user's 0600 stays 0600).
        if let Ok(old) = std::fs::metadata(target) {
            f.set_permissions(old.permissions())?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    gone(&tmp);
    result
}

/// The identity of a path for "is this the same file": (device, inode) when it exists, else the
/// canonical directory joined with the name.
#[derive(PartialEq)]
enum Identity {
    Inode(u64, u64),
    Name(PathBuf),
    Descriptor(i32),
}

fn identity(path: &Path) -> Identity {
    if let Ok(Kind::Descriptor(fd)) = kind(path) {
        return Identity::Descriptor(fd);
    }
    if let Ok(m) = std::fs::metadata(path) {
        return Identity::Inode(m.dev(), m.ino());
    }
    let dir = std::fs::canonicalize(parent_of(path)).unwrap_or_else(|_| parent_of(path).into());
    Identity::Name(dir.join(path.file_name().unwrap_or_default()))
}

/// An advisory lock on one output, released (and its lock file removed) when dropped.
#[derive(Debug)]
pub struct OutputLock {
    _held: File,
    path: PathBuf,
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Remove while still holding the lock; `lock` re-checks the inode, so a process that opened the
        // old lock file just before this cannot believe it holds the new one. The list is held across
        // the removal so a signal's handler cannot remove the path again once another process owns it.
        let mut listed = live_files();
        let _ = std::fs::remove_file(&self.path);
        listed.retain(|p| p != &self.path);
    }
}

fn lock(flag: &str, target: &Path) -> Result<OutputLock, OutputError> {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let lock_path = parent_of(target).join(format!(".{name}.lock"));
    let not_writable = |e: std::io::Error| OutputError::NotWritable {
        flag: flag.to_string(),
        path: target.display().to_string(),
        // The reason alone: the lock file sits beside the output, and naming both read as the path
        // said twice.
        reason: e.to_string(),
    };
    let not_a_lock = |what: &str| OutputError::NotALock {
        flag: flag.to_string(),
        path: target.display().to_string(),
        lock: lock_path.display().to_string(),
        what: what.to_string(),
    };
    loop {
        // The list of live files is held from before the lock file can exist until it is listed: a
        // signal's handler (which removes what is listed) waits for it, so a signal between the open
        // and the listing cannot leave the lock behind. Nothing below blocks (O_NONBLOCK, a try-lock).
        let mut listed = live_files();
        // Looked at before opening: a FIFO there would block the open, a link would lock its target.
        match std::fs::symlink_metadata(&lock_path) {
            Ok(meta) => {
                if let Some(what) = not_regular(&meta) {
                    return Err(not_a_lock(what));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(not_writable(e)),
        }
        // O_NOFOLLOW and O_NONBLOCK again, for what may have been put there since the look.
        use std::os::unix::fs::OpenOptionsExt;
        let file = match OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&lock_path)
        {
            Ok(file) => file,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(not_a_lock("a symbolic link"))
            }
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => return Err(not_a_lock("a FIFO")),
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                return Err(not_a_lock("a directory"))
            }
            Err(e) => return Err(not_writable(e)),
        };
        if let Some(what) = file.metadata().ok().as_ref().and_then(not_regular) {
            return Err(not_a_lock(what));
        }
        if let Err(e) = crate::system::kernel::try_lock_exclusive(&file) {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                return Err(OutputError::Locked {
                    flag: flag.to_string(),
                    path: target.display().to_string(),
                    lock: lock_path.display().to_string(),
                });
            }
            return Err(not_writable(e));
        }
        // The holder before us may have removed the file after we opened it: then lock the new one.
        let held = file.metadata().map_err(not_writable)?;
        match std::fs::symlink_metadata(&lock_path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                // Held, and no other macbench holds it: empty (just made, or a stale lock of an older
                // macbench) or marked is a lock to take over; anything else is a user's file that the
                // release would delete.
                let mut file = file;
                if !is_lock_content(&mut file).map_err(not_writable)? {
                    return Err(not_a_lock("a file holding something else"));
                }
                mark_lock(&mut file).map_err(not_writable)?;
                // Ours now: a signal that ends this process removes it.
                listed.push(lock_path.clone());
                return Ok(OutputLock {
                    _held: file,
                    path: lock_path,
                });
            }
            _ => continue,
        }
    }
}

/// Whether an open lock file is empty or holds [`LOCK_MARK`] (at most a short line is read).
fn is_lock_content(file: &mut File) -> std::io::Result<bool> {
    use std::io::Read;
    let mut head = Vec::new();
    Read::by_ref(file).take(256).read_to_end(&mut head)?;
    Ok(head.is_empty() || head.starts_with(LOCK_MARK.as_bytes()))
}

/// Write [`LOCK_MARK`] and this process's id into a held lock file, so that if this process is
/// killed outright the file left behind is known for a stale lock.
fn mark_lock(file: &mut File) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    writeln!(file, "{LOCK_MARK} {}", std::process::id())
}

/// What [`prepare`] returns: keep it alive for as long as the outputs are being written.
#[derive(Debug, Default)]
pub struct Prepared {
    _locks: Vec<OutputLock>,
}

/// Check every output before any work starts: writable, distinct from every input and from each other,
/// and not being written by another macbench (locked until the returned value is dropped). Also moves
/// printed lines to standard error if an output is `-`.
pub fn prepare(
    outputs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Result<Prepared, OutputError> {
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let id = identity(path);
        let other = inputs
            .iter()
            .map(|(f, p)| (*f, *p, true))
            .chain(outputs[..i].iter().map(|(f, p)| (*f, *p, false)))
            .find(|(_, p, _)| identity(p) == id);
        if let Some((other_flag, other_path, is_input)) = other {
            return Err(OutputError::Same {
                flag: flag.to_string(),
                path: path.display().to_string(),
                other: format!(
                    "{} {} ({})",
                    if is_input { "the input" } else { "the output" },
                    other_path.display(),
                    other_flag
                ),
            });
        }
    }
    let mut locks = Vec::new();
    for (flag, path) in outputs {
        let shown = path.display().to_string();
        let not_writable = |e: std::io::Error| OutputError::NotWritable {
            flag: flag.to_string(),
            path: shown.clone(),
            reason: e.to_string(),
        };
        match kind(path) {
            Ok(Kind::Descriptor(fd)) => {
                // Standard output by any name: printed lines move to standard error, or the document
                // would be mixed with them.
                if fd == 1 {
                    crate::stdio::take_stdout();
                }
                crate::system::kernel::fd_writable(fd).map_err(not_writable)?;
            }
            Ok(Kind::Through(target)) => {
                if std::fs::metadata(&target).is_ok() {
                    // Devices and FIFOs: only ask; opening a FIFO would wait for a reader.
                    access_write(&target).map_err(not_writable)?;
                }
            }
            Ok(Kind::Replace(target)) => {
                let dir = parent_of(&target);
                if !dir.is_dir() {
                    return Err(OutputError::NoDirectory {
                        flag: flag.to_string(),
                        path: shown,
                        dir: dir.display().to_string(),
                    });
                }
                // The lock file is created in the same directory the temporary file will be: creating it
                // proves the directory is writable (also for root on a read-only file system).
                locks.push(lock(flag, &target)?);
            }
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                return Err(OutputError::IsDirectory {
                    flag: flag.to_string(),
                    path: shown,
                })
            }
            Err(e) => return Err(not_writable(e)),
        }
    }
    Ok(Prepared { _locks: locks })
}

/// Whether files can be made in `dir`: a file made and removed at once. Asking `access(2)` is not
/// enough: root passes it on a read-only file system.
pub fn writable_dir(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".macbench-probe.{}", std::process::id()));
    live(&probe);
    let made = OpenOptions::new().write(true).create_new(true).open(&probe);
    let _ = std::fs::remove_file(&probe);
    gone(&probe);
    made.map(drop)
}

/// Whether `path` is the very file standard output is (same device and inode): `/dev/stdout`, or a
/// FIFO or terminal the shell also gave as standard output.
fn is_standard_output(path: &Path) -> bool {
    let Ok(named) = std::fs::metadata(path) else {
        return false;
    };
    crate::system::kernel::stdout_identity() == Some((named.dev(), named.ino()))
}

/// Keep the file at `path` under a dated name beside it before it is replaced:
/// `macbench-results.json` last modified at 01:23:45 on 27 November 2026 (local time) is kept as
/// `macbench-results.2026-11-27T01-23-45.json` (`-2`, `-3` … added when that name is taken; no file is
/// ever overwritten). A hard link where the file system allows it (instant, and the file stays in
/// place until the rename that replaces it), else a copy. Returns the name it is kept as.
pub fn keep_dated(path: &Path) -> std::io::Result<PathBuf> {
    let source = std::fs::canonicalize(path)?;
    let modified = std::fs::metadata(&source)?.modified()?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let stamp = local_stamp(modified);
    for n in 1..=1000 {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let kept = path.with_file_name(format!("{stem}.{stamp}{suffix}{ext}"));
        match std::fs::hard_link(&source, &kept) {
            Ok(()) => return Ok(kept),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => match copy_new(&source, &kept) {
                Ok(()) => return Ok(kept),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            },
        }
    }
    Err(std::io::Error::other(format!(
        "1000 dated names beside it are taken ({stem}.{stamp}-N{ext})"
    )))
}

/// Copy `from` to `to`, which must not exist yet, with its permissions.
fn copy_new(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut source = File::open(from)?;
    let mut dest = OpenOptions::new().write(true).create_new(true).open(to)?;
    let result = (|| {
        dest.set_permissions(source.metadata()?.permissions())?;
        std::io::copy(&mut source, &mut dest)?;
        dest.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(to);
    }
    result
}

/// `2026-11-27T01-23-45`: a moment in local time as a file name can hold it (no `:`), sorting as the
/// moments do.
fn local_stamp(at: std::time::SystemTime) -> String {
    let secs = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    match crate::system::kernel::local_time(secs) {
        Some([year, month, day, hour, minute, second]) => {
            format!("{year:04}-{month:02}-{day:02}T{hour:02}-{minute:02}-{second:02}")
        }
        None => format!("{secs}"),
    }
}

fn access_write(path: &Path) -> std::io::Result<()> {
    crate::system::kernel::access_writable(path)
}

/// The `*.json` files in `dir` that `report`, `validate`, `diff` and `export` of the directory read
/// (as [`super::read::expand_inputs`] finds them), sorted; none when `dir` is no directory.
pub fn json_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The quoted glob patterns among `paths` (a path that does not exist and holds `*`, `?` or `[`),
/// as the readers expand them.
fn glob_patterns(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|t| t.contains(['*', '?', '[']))
        .collect()
}

/// The directories among `paths` as `report`, `diff`, `validate` and `export` read them: those named,
/// those a quoted glob matches, and those holding the files a quoted glob matches (`'d/*.json'`
/// reads d as surely as `d` does: issue 47 N20, `export 'd/*.json' -o d/out.json` wrote into it).
fn directories_read(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for path in paths {
        let text = path.to_string_lossy();
        if !path.exists() && text.contains(['*', '?', '[']) {
            if let Ok(matches) = glob::glob(&text) {
                for m in matches.filter_map(Result::ok) {
                    let dir = if m.is_dir() {
                        m
                    } else {
                        parent_of(&m).to_path_buf()
                    };
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
            }
        } else if path.is_dir() {
            dirs.push(path.clone());
        }
    }
    dirs
}

/// Refuse an output named `*.json` inside a directory the command reads: every later reader of that
/// directory would take it for a results file (`export --format bmf DIR -o DIR/bmf.json` made
/// `validate DIR` and `report DIR` fail). Checked before anything is written; exit 2.
pub fn not_into_inputs(outputs: &[(&str, &Path)], paths: &[PathBuf]) -> Result<(), String> {
    // Compared canonically (`d/` and `./d` are one directory), named as the user gave it.
    let dirs: Vec<(PathBuf, PathBuf)> = directories_read(paths)
        .into_iter()
        .filter_map(|d| Some((std::fs::canonicalize(&d).ok()?, d)))
        .collect();
    let patterns: Vec<(glob::Pattern, String)> = glob_patterns(paths)
        .into_iter()
        .filter_map(|t| Some((glob::Pattern::new(&t).ok()?, t)))
        .collect();
    for (flag, path) in outputs {
        if is_stream(path) {
            continue;
        }
        // An output a quoted input pattern matches is an input of the next run of the same command,
        // or already one: never written (issue 47 N20).
        let plain = path.strip_prefix(".").unwrap_or(path);
        if let Some((_, text)) = patterns
            .iter()
            .find(|(p, _)| p.matches_path(path) || p.matches_path(plain))
        {
            return Err(format!(
                "{flag} {}: the input pattern {text} matches it, so it would be read as an input; write it elsewhere",
                path.display()
            ));
        }
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let Ok(parent) = std::fs::canonicalize(parent) else {
            continue;
        };
        if let Some((_, dir)) = dirs.iter().find(|(canonical, _)| *canonical == parent) {
            return Err(format!(
                "{flag} {}: inside {}, a directory this command reads, where `validate`, `report` and `diff` would take it for results; write it elsewhere",
                path.display(),
                dir.display()
            ));
        }
    }
    Ok(())
}

/// `--png DIR` of `report`, by `run -o`'s rule: refused when DIR is a directory the command reads, or
/// already holds a file among `names` (a reproduction's `figures/`, an earlier report's PNGs), which
/// would be replaced without a word; then made and proved writable. Exit 2, one line, before anything
/// is written.
pub fn png_dir(dir: &Path, names: &[PathBuf], inputs: &[PathBuf]) -> Result<(), String> {
    let shown = dir.display();
    if let Ok(canonical) = std::fs::canonicalize(dir) {
        let read = directories_read(inputs)
            .into_iter()
            .find(|d| std::fs::canonicalize(d).is_ok_and(|d| d == canonical));
        if let Some(read) = read {
            return Err(format!(
                "--png {shown}: is {}, a directory this command reads; give another directory for the PNG files",
                read.display()
            ));
        }
    }
    if let Some(taken) = names.iter().find(|p| std::fs::symlink_metadata(p).is_ok()) {
        return Err(format!(
            "--png {shown}: already holds {}, which this report would replace; give another directory or move it away",
            taken.display()
        ));
    }
    output_dir("--png", dir, "the PNG files")
}

/// An output directory (`run -o`, `reproduce -o`, `--resume`): made if missing, and proved writable
/// before anything runs. Every refusal is exit 2 and one line naming the flag and the directory once
/// (a read-only directory used to be exit 1 when it had to be made and exit 2, with its path twice,
/// when it existed).
pub fn output_dir(flag: &str, dir: &Path, what: &str) -> Result<(), String> {
    let shown = dir.display();
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "{flag} {shown}: not a directory; give a directory for {what}"
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("{flag} {shown}: cannot make the directory ({e})"))?;
    writable_dir(dir).map_err(|e| format!("{flag} {shown}: cannot write there ({e})"))
}

/// The files `run` (and `net`) write: `--json`, `--csv` and, beside the CSV, its per-thread file.
pub fn run_outputs(
    json: Option<&Path>,
    csv: Option<&Path>,
    threads: bool,
) -> Vec<(&'static str, PathBuf)> {
    let mut out: Vec<(&'static str, PathBuf)> = Vec::new();
    if let Some(p) = json {
        out.push(("--json", p.to_path_buf()));
    }
    if let Some(p) = csv {
        out.push(("--csv", p.to_path_buf()));
        if threads && !is_stream(p) {
            out.push((
                "--csv (per-thread file)",
                crate::report::csv_export::threads_path(p),
            ));
        }
    }
    out
}

/// Whether a periodic rewrite of `path` should happen now: a stream (standard output, a device, a
/// FIFO) takes one document, at the end.
pub fn write_now(path: &Path, last: bool) -> bool {
    last || !is_stream(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn a_second_lock_on_the_same_output_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        let first = prepare(&[("--json", &out)], &[]).unwrap();
        let second = prepare(&[("--json", &out)], &[]).unwrap_err();
        assert!(matches!(second, OutputError::Locked { .. }), "{second}");
        drop(first);
        prepare(&[("--json", &out)], &[]).unwrap();
    }

    #[test]
    fn an_output_equal_to_an_input_or_another_output_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("r.json");
        std::fs::write(&input, "{}").unwrap();
        let same = prepare(&[("-o", &input)], &[("RESULTS", &input)]).unwrap_err();
        assert!(matches!(same, OutputError::Same { .. }));
        let new = dir.path().join("x");
        let twice = prepare(&[("--json", &new), ("--csv", &new)], &[]).unwrap_err();
        assert!(matches!(twice, OutputError::Same { .. }));
    }

    #[test]
    fn regular_files_are_replaced_and_symlinks_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.json");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn dev_full_reports_its_write_error() {
        if !Path::new("/dev/full").exists() {
            eprintln!("SKIP dev_full_reports_its_write_error: no /dev/full here");
            return;
        }
        let e = write_atomic(Path::new("/dev/full"), b"x").unwrap_err();
        assert!(e.contains("/dev/full"), "{e}");
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
    }
}
