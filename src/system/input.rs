//! Opening a file the user named as an input, with a bound on the wait.
//!
//! `open(2)` of a FIFO for reading waits until some process opens it for writing: `mkfifo f; macbench
//! tag f` with no writer used to block forever, and as the wait is inside the kernel, no flag checked
//! between batches could end it. A FIFO is therefore opened on a helper thread and waited for at most
//! [`FIFO_WRITER_WAIT`]; past it the open is abandoned (the thread stays blocked until the process
//! ends, which the error that follows brings about) and the error names the wait. A pipe that has its
//! writer — process substitution `<(…)`, `/dev/stdin` of a pipeline — opens at once, as any file does.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

/// How long opening a FIFO input waits for a process to open it for writing.
pub const FIFO_WRITER_WAIT: Duration = Duration::from_secs(10);

/// Open `path` for reading; a FIFO waits at most [`FIFO_WRITER_WAIT`] for its writer.
pub fn open_input(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::FileTypeExt;
    if !std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo()) {
        return File::open(path);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::Builder::new()
        .name("open-fifo".into())
        .spawn(move || {
            let _ = tx.send(File::open(owned));
        })?;
    match rx.recv_timeout(FIFO_WRITER_WAIT) {
        Ok(opened) => opened,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "a FIFO no process opened for writing within {} s",
                FIFO_WRITER_WAIT.as_secs()
            ),
        )),
    }
}
