//! The watcher: inotify on every directory a checkpoint keeps.
//!
//! Why inotify through `libc` and not a crate: the calls are three
//! (`inotify_init1`, `inotify_add_watch`, `read`) and the event layout is
//! fixed by the kernel; `libc` is already a dependency, and the
//! cross-platform watcher crates add threads, channels and debouncing that a
//! set of directory names does not need.
//!
//! A background thread reads events and adds the directory each one names
//! to the dirty set (a file's events are reported on its directory). A new
//! directory gets watches at once, for it and all below it, and all of them
//! count as dirty (files may have landed before the watch did). A renamed
//! directory keeps its watch under its old name, and a changed `.gitignore`
//! changes what is watched: both re-map every watch and mark an overflow,
//! so the next checkpoint walks everything. A lost event (`IN_Q_OVERFLOW`)
//! or a watch the kernel refused does the same. The repository's ref
//! directories are watched too, so `git branch -D` counts as a change.
//!
//! The watches on the workspace's directories come either from the
//! watcher's own walk ([`start`]) or, for a session's first checkpoint,
//! from that checkpoint's walk ([`start_unwalked`] then [`Running::add_dir`]
//! for each directory, just before the walk lists it): one walk instead of
//! two. Either way a directory's watch exists before its entries are read,
//! so whatever is written in it later is either read or reported.

use std::collections::{BTreeSet, HashMap};
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::rules::{Rules, Stack, Verdict};
use crate::{Dirty, Error, Options, Result};

const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MODIFY
    | libc::IN_CLOSE_WRITE
    | libc::IN_ATTRIB
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW
    | libc::IN_EXCL_UNLINK;

#[derive(Clone, Debug)]
enum Target {
    Dir(PathBuf),
    Git(PathBuf),
}

#[derive(Default)]
struct State {
    dirty: BTreeSet<PathBuf>,
    overflow: bool,
    wds: HashMap<i32, Target>,
}

pub(crate) struct Shared {
    fd: Inotify,
    root: PathBuf,
    rules: Rules,
    state: Mutex<State>,
    reader: Mutex<()>,
    changed: AtomicBool,
    /// Why some directory could not be watched (the watch limit), when a
    /// checkpoint's walk added the watches.
    error: Mutex<Option<String>>,
    #[cfg(test)]
    test: Arc<TestHooks>,
}

#[cfg(test)]
pub(crate) type AroundWatch = Box<dyn Fn(&Path, bool) + Send + Sync>;

/// What tests change in the work of the watchers of one workspace.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct TestHooks {
    /// Called with a directory's relative path when a checkpoint's walk
    /// asks for its watch, just before it is added (`false`) and just
    /// after (`true`); the walk lists the directory next.
    pub around_watch: Option<AroundWatch>,
    /// Past this many watches, adding one fails as at the watch limit.
    pub max_watches: Option<usize>,
}

#[cfg(test)]
static TEST_HOOKS: Mutex<Vec<(PathBuf, Arc<TestHooks>)>> = Mutex::new(Vec::new());

/// Sets the hooks of the watchers started on `root` (canonical) from now on.
#[cfg(test)]
pub(crate) fn set_test_hooks(root: &Path, hooks: TestHooks) {
    let mut all = TEST_HOOKS.lock().unwrap();
    all.retain(|(r, _)| r != root);
    all.push((root.to_path_buf(), Arc::new(hooks)));
}

#[cfg(test)]
fn test_hooks(root: &Path) -> Arc<TestHooks> {
    let all = TEST_HOOKS.lock().unwrap();
    all.iter()
        .find(|(r, _)| r == root)
        .map(|(_, h)| h.clone())
        .unwrap_or_default()
}

pub(crate) struct Running {
    shared: Arc<Shared>,
    wake: OwnedFd,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Running {
    /// Ends the reader thread.
    fn end_thread(&self) {
        unsafe { libc::write(self.wake.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }

    /// Stops watching: the reader thread ends and the inotify instance is
    /// closed aside. From then on every directory counts as changed (an
    /// overflow): a later checkpoint walks everything.
    pub fn stop(&self) {
        self.end_thread();
        self.shared.fd.close();
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.overflow = true;
        self.shared.changed.store(true, Ordering::Release);
    }
}

/// The inotify instance.
///
/// Its last close frees its watches, and the kernel waits for that
/// (`fsnotify_destroy_group` flushes the mark reaper, which waits for an
/// SRCU grace period): 0.2 ms usually, up to 13 ms on a 2-vCPU VM, at the
/// end of every session and in its exit. So the last close is made in a
/// short-lived child process, which holds nothing else, and the session
/// goes on (see [`close_aside`]).
struct Inotify(std::sync::RwLock<Option<OwnedFd>>);

impl Inotify {
    /// `f` with the descriptor, unless it was closed ([`Inotify::close`]).
    fn with<R>(&self, f: impl FnOnce(std::os::fd::RawFd) -> R) -> Option<R> {
        let fd = self.0.read().unwrap_or_else(|e| e.into_inner());
        fd.as_ref().map(|fd| f(fd.as_raw_fd()))
    }

    /// The descriptor as a number, for the reader thread's `poll` (which
    /// must not hold the lock while it waits; the thread has ended before
    /// the descriptor is closed).
    fn raw(&self) -> std::os::fd::RawFd {
        self.with(|fd| fd).unwrap_or(-1)
    }

    /// Closes it, aside (see [`close_aside`]).
    fn close(&self) {
        let fd = self.0.write().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(fd) = fd {
            close_aside(fd);
        }
    }
}

impl Drop for Inotify {
    fn drop(&mut self) {
        self.close();
    }
}

/// Closes `fd` so that its last close, and whatever the kernel waits for
/// in it, happens in a child process: the child keeps only `fd` and a pipe,
/// waits until this process has closed its own copy (the pipe's end), then
/// closes `fd` and exits; a thread here reaps it (or, if this process ends
/// first, whoever adopts it). If the child cannot be made, `fd` is closed
/// here.
fn close_aside(fd: OwnedFd) {
    let mut pipe = [0; 2];
    // SAFETY: pipe2 fills the two-int array we own.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read_end, write_end] = pipe;
    let raw = fd.as_raw_fd();
    // SAFETY: the child makes only system calls (no allocation, no lock)
    // before `_exit`, as a child of a threaded process must.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let (low, high) = (raw.min(read_end) as u32, raw.max(read_end) as u32);
        // SAFETY: closing descriptors of this child's own table; reading
        // one byte into a local.
        unsafe {
            if low > 0 {
                libc::syscall(libc::SYS_close_range, 0u32, low - 1, 0u32);
            }
            if high > low + 1 {
                libc::syscall(libc::SYS_close_range, low + 1, high - 1, 0u32);
            }
            libc::syscall(libc::SYS_close_range, high + 1, u32::MAX, 0u32);
            let mut byte = 0u8;
            while libc::read(read_end, (&mut byte as *mut u8).cast(), 1) < 0
                && *libc::__errno_location() == libc::EINTR
            {}
            libc::close(raw);
            libc::_exit(0);
        }
    }
    drop(fd);
    // SAFETY: closing the pipe's ends we own; the child sees EOF once the
    // write end is closed here, after `fd`.
    unsafe {
        libc::close(write_end);
        libc::close(read_end);
    }
    if pid > 0 {
        let _ = std::thread::Builder::new()
            .name("aq-undo-close".into())
            .spawn(move || {
                let mut status = 0;
                // SAFETY: waiting for our own child into a local.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            });
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.end_thread();
    }
}

fn watch_limit_hint() -> String {
    let n = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches").unwrap_or_default();
    format!(
        "the inotify watch limit (fs.inotify.max_user_watches = {}) is reached; raise it, e.g. \
         `sudo sysctl fs.inotify.max_user_watches=524288`",
        n.trim()
    )
}

impl Shared {
    /// Adds a watch; `Err` only for the watch limit.
    fn add(&self, st: &mut State, abs: &Path, target: Target) -> Result<bool> {
        let Ok(c) = CString::new(abs.as_os_str().as_bytes()) else {
            return Ok(false);
        };
        #[cfg(test)]
        if let Some(max) = self.test.max_watches
            && st.wds.len() >= max
        {
            return Err(Error(watch_limit_hint()));
        }
        // Closed (the session ended): nothing is watched any more.
        let Some(wd) = self
            .fd
            .with(|fd| unsafe { libc::inotify_add_watch(fd, c.as_ptr(), MASK) })
        else {
            return Ok(false);
        };
        if wd < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOSPC) => Err(Error(watch_limit_hint())),
                // Gone already, unreadable, or a link: nothing to watch.
                _ => Ok(false),
            };
        }
        st.wds.insert(wd, target);
        Ok(true)
    }

    /// Watches `rel` and every kept directory below; with `mark`, they are
    /// all dirty too.
    fn add_tree(
        &self,
        st: &mut State,
        rel: &Path,
        stack: &Stack,
        verdict: Verdict,
        mark: bool,
    ) -> Result<()> {
        let abs = self.root.join(rel);
        if !self.add(st, &abs, Target::Dir(rel.to_path_buf()))? {
            return Ok(());
        }
        if mark {
            st.dirty.insert(rel.to_path_buf());
        }
        let stack = self
            .rules
            .child_stack(stack, verdict, self.rules.load_dir(&abs));
        let Ok(rd) = std::fs::read_dir(&abs) else {
            return Ok(());
        };
        for ent in rd.flatten() {
            if !ent.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let child = rel.join(ent.file_name());
            let v = self
                .rules
                .verdict(&stack, &abs.join(ent.file_name()), &child, true);
            if v != Verdict::Skip {
                self.add_tree(st, &child, &stack, v, mark)?;
            }
        }
        Ok(())
    }

    fn add_git(&self, st: &mut State) -> Result<()> {
        let Some(gitdir) = crate::gitstate::find_gitdir(&self.root) else {
            return Ok(());
        };
        let common = crate::gitstate::common_dir(&gitdir);
        self.add(st, &gitdir, Target::Git(gitdir.clone()))?;
        self.add(st, &common, Target::Git(common.clone()))?;
        let logs = common.join("logs/refs");
        self.add(st, &logs, Target::Git(logs.clone()))?;
        self.add_git_tree(st, &common.join("refs"))
    }

    fn add_git_tree(&self, st: &mut State, dir: &Path) -> Result<()> {
        if !self.add(st, dir, Target::Git(dir.to_path_buf()))? {
            return Ok(());
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for ent in rd.flatten() {
            if ent.file_type().is_ok_and(|t| t.is_dir()) {
                self.add_git_tree(st, &ent.path())?;
            }
        }
        Ok(())
    }

    /// Every watch again, under the names the directories have now.
    fn rescan(&self, st: &mut State) {
        st.wds.clear();
        st.overflow = true;
        if self
            .add_tree(st, Path::new(""), &Stack::default(), Verdict::Keep, false)
            .and_then(|_| self.add_git(st))
            .is_err()
        {
            st.overflow = true;
        }
    }

    fn handle(&self, wd: i32, mask: u32, name: &[u8]) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if mask & libc::IN_Q_OVERFLOW != 0 {
            st.overflow = true;
            self.changed.store(true, Ordering::Release);
            return;
        }
        let Some(target) = st.wds.get(&wd).cloned() else {
            return;
        };
        if mask & libc::IN_IGNORED != 0 {
            st.wds.remove(&wd);
            return;
        }
        let is_dir = mask & libc::IN_ISDIR != 0;
        match target {
            Target::Git(dir) => {
                if is_dir && mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0 {
                    let _ = self.add_git_tree(&mut st, &dir.join(OsStr::from_bytes(name)));
                }
            }
            Target::Dir(rel) => {
                st.dirty.insert(rel.clone());
                let moved_dir = is_dir && mask & (libc::IN_MOVED_FROM | libc::IN_MOVED_TO) != 0;
                if name == b".gitignore" || moved_dir || mask & libc::IN_MOVE_SELF != 0 {
                    self.rescan(&mut st);
                } else if is_dir && mask & libc::IN_CREATE != 0 {
                    let child = rel.join(OsStr::from_bytes(name));
                    if let Some(stack) = self.rules.stack_for(&rel) {
                        let v = self
                            .rules
                            .verdict(&stack, &self.root.join(&child), &child, true);
                        if v != Verdict::Skip
                            && self.add_tree(&mut st, &child, &stack, v, true).is_err()
                        {
                            st.overflow = true;
                        }
                    }
                }
            }
        }
        self.changed.store(true, Ordering::Release);
    }

    /// Reads and handles every queued event; the reader lock makes a
    /// [`Running::take`] wait for events the thread has read but not yet
    /// handled.
    fn drain(&self) {
        let _reading = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        let mut buf = [0u8; 16 * 1024];
        let head = std::mem::size_of::<libc::inotify_event>();
        loop {
            let n = self
                .fd
                .with(|fd| unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) })
                .unwrap_or(0);
            if n <= 0 {
                return; // EAGAIN: nothing more queued
            }
            let n = n as usize;
            let mut off = 0usize;
            while off + head <= n {
                // The kernel's layout: wd, mask, cookie, len, then the name.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[off..].as_ptr().cast()) };
                let len = ev.len as usize;
                let name_bytes = &buf[(off + head).min(n)..(off + head + len).min(n)];
                let name = &name_bytes[..name_bytes
                    .iter()
                    .position(|&b| b == 0)
                    .unwrap_or(name_bytes.len())];
                self.handle(ev.wd, ev.mask, name);
                off += head + len;
            }
        }
    }

    /// Whether events are queued in the kernel that nobody has read yet.
    fn pending(&self) -> bool {
        let mut n: libc::c_int = 0;
        let r = self
            .fd
            .with(|fd| unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) })
            .unwrap_or(-1);
        r == 0 && n > 0
    }

    fn run(&self, wake: i32) {
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: self.fd.raw(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: wake,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if r < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if fds[1].revents != 0 {
                break;
            }
            if fds[0].revents & libc::POLLIN != 0 {
                self.drain();
            }
        }
    }
}

/// Starts watching: every kept directory of the workspace, found by the
/// watcher's own walk.
pub(crate) fn start(workspace: &Path, opts: &Options) -> Result<Running> {
    let running = start_unwalked(workspace, opts)?;
    running.cover()?;
    Ok(running)
}

/// Starts watching the repository's refs only: the workspace's directories
/// are added by a checkpoint's walk, [`Running::add_dir`] for each, or by
/// [`Running::cover`].
pub(crate) fn start_unwalked(workspace: &Path, opts: &Options) -> Result<Running> {
    let root = std::fs::canonicalize(workspace)
        .map_err(|e| crate::io_error("find the workspace", workspace, e))?;
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        let why = match e.raw_os_error() {
            Some(libc::EMFILE) => {
                "too many inotify instances (fs.inotify.max_user_instances)".to_string()
            }
            Some(libc::ENOSYS) => "the kernel has no inotify".to_string(),
            _ => e.to_string(),
        };
        return Err(Error(format!(
            "cannot watch the workspace: {why}; every checkpoint walks it all"
        )));
    }
    let shared = Arc::new(Shared {
        fd: Inotify(std::sync::RwLock::new(Some(unsafe {
            OwnedFd::from_raw_fd(fd)
        }))),
        rules: Rules::new(&root, &opts.include),
        #[cfg(test)]
        test: test_hooks(&root),
        root,
        state: Mutex::new(State::default()),
        reader: Mutex::new(()),
        changed: AtomicBool::new(false),
        error: Mutex::new(None),
    });
    {
        let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        shared
            .add_git(&mut st)
            .map_err(|e| Error(format!("cannot watch the workspace: {e}")))?;
    }
    let mut pipe = [0i32; 2];
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error(format!(
            "cannot watch the workspace: pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(pipe[0]), OwnedFd::from_raw_fd(pipe[1])) };
    let s2 = shared.clone();
    let thread = std::thread::Builder::new()
        .name("aq-undo-watch".into())
        .spawn(move || {
            s2.run(rd.as_raw_fd());
            drop(rd);
        })
        .map_err(|e| Error(format!("cannot watch the workspace: {e}")))?;
    Ok(Running {
        shared,
        wake: wr,
        thread: Mutex::new(Some(thread)),
    })
}

impl Running {
    /// The workspace's canonical path, which watched paths are relative to.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// Watches every kept directory, by the watcher's own walk.
    pub fn cover(&self) -> Result<()> {
        let shared = &self.shared;
        let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        shared
            .add_tree(
                &mut st,
                Path::new(""),
                &Stack::default(),
                Verdict::Keep,
                false,
            )
            .map_err(|e| Error(format!("cannot watch the workspace: {e}")))
    }

    /// Watches the directory `rel` (`abs` in full), for a walk that lists
    /// it next; after the watch limit is reached, does nothing more and
    /// [`Running::error`] says why. Called from the walk's workers at once:
    /// the watch is added and recorded under the state's lock, so that the
    /// watcher thread never handles an event of a watch it does not know.
    pub fn add_dir(&self, rel: &Path, abs: &Path) {
        let shared = &self.shared;
        #[cfg(test)]
        if let Some(hook) = &shared.test.around_watch {
            hook(rel, false);
        }
        let mut failed = shared.error.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_some() {
            return;
        }
        let added = {
            let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            shared.add(&mut st, abs, Target::Dir(rel.to_path_buf()))
        };
        if let Err(e) = added {
            *failed = Some(format!("cannot watch the workspace: {e}"));
        }
        drop(failed);
        #[cfg(test)]
        if let Some(hook) = &shared.test.around_watch {
            hook(rel, true);
        }
    }

    /// Why the watches a walk added are not complete, if they are not.
    pub fn error(&self) -> Option<String> {
        self.shared
            .error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The inotify descriptor's number.
    #[cfg(test)]
    pub(crate) fn inotify_fd(&self) -> i32 {
        self.shared.fd.raw()
    }

    /// The workspace's directories watched now, sorted.
    #[cfg(test)]
    pub(crate) fn watched_dirs(&self) -> Vec<PathBuf> {
        let st = self.shared.state.lock().unwrap();
        let mut v: Vec<PathBuf> = st
            .wds
            .values()
            .filter_map(|t| match t {
                Target::Dir(rel) => Some(rel.clone()),
                Target::Git(_) => None,
            })
            .collect();
        v.sort();
        v
    }

    pub fn changed(&self) -> bool {
        // Stopped: nothing is watched, so anything may have changed.
        if self.shared.fd.with(|_| ()).is_none() {
            return true;
        }
        let seen = || self.shared.changed.load(Ordering::Acquire) || self.shared.pending();
        if seen() {
            return true;
        }
        // The watcher thread may have read events it has not flagged yet:
        // wait for its drain to end, then look again.
        let _reading = self.shared.reader.lock().unwrap_or_else(|e| e.into_inner());
        seen()
    }

    pub fn take(&self) -> Dirty {
        self.shared.drain();
        let stopped = self.shared.fd.with(|_| ()).is_none();
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        self.shared.changed.store(false, Ordering::Release);
        Dirty {
            dirs: std::mem::take(&mut st.dirty),
            overflow: std::mem::replace(&mut st.overflow, false) || stopped,
        }
    }
}
