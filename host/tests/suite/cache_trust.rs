//! What the compile cache trusts. Loading an artifact runs native code, so
//! the cache loads only what the user (or root) could have put there, as
//! ssh treats `~/.ssh`: every folder on the way to the cache is owned by
//! root or the user and writable by no one else (unless sticky and
//! root-owned, as `/tmp`); nothing is followed that someone else could have
//! linked; the checks are made on the files opened, not on paths opened
//! again later; and an entry is bound to its key, so one moved under
//! another key is not loaded. Every refusal is a warning naming the path
//! and what was wrong, and the guest is compiled afresh: a call never fails
//! because of the cache.
//!
//! Two guests tell apart which code ran: `c_scale` doubles in one and
//! triples in the other, so a wrong artifact loaded shows as a wrong result.
//!
//! The tests change owners (`chown` to uid 65534, `nobody`), so they run as
//! root (as CI does) and fail, saying so, otherwise.

use crate::common;

use std::os::unix::fs::{PermissionsExt, lchown};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{captured_logs, guest_wat, vector_call, wasm};
use cyxla_sandbox::cache::ModuleCache;
use cyxla_sandbox::{AllowList, Engine, Guest, Guests, Limits, Sandbox};
use sha2::{Digest, Sha256};

/// Someone else: `nobody`.
const OTHER: u32 = 65534;

fn as_root() {
    assert!(
        rustix::process::geteuid().is_root(),
        "these tests give files to another user (chown to uid {OTHER}): run them as root, \
         as CI does (for example `sudo -E cargo test -p cyxla-sandbox --test suite cache_trust::`)"
    );
}

/// A guest whose `c_scale` multiplies by `k`.
fn scaling_guest(k: u32) -> Vec<u8> {
    wasm(&guest_wat(
        &format!(
            r#"(func (export "scale") (param $f i32) (result i32)
                 (call $scale (local.get $f) (f32.const {k})) (i32.const 0))"#
        ),
        &[("c_scale", "scale")],
    ))
}

/// A scratch folder holding the two guests, `double/c.wasm` and
/// `triple/c.wasm`, for a test that runs as root.
struct Scratch {
    tmp: tempfile::TempDir,
    double: PathBuf,
    triple: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        as_root();
        let tmp = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for (name, k) in [("double", 2), ("triple", 3)] {
            let dir = tmp.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            let path = dir.join("c.wasm");
            std::fs::write(&path, scaling_guest(k)).unwrap();
            paths.push(path);
        }
        let triple = paths.pop().unwrap();
        let double = paths.pop().unwrap();
        Scratch {
            tmp,
            double,
            triple,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
}

/// Loads the guest at `wasm` through `cache` (logs captured), calls
/// `c_scale` on 1.0 and returns the result (the factor of the code that
/// ran) and the log.
fn run(wasm: &Path, cache: &ModuleCache) -> (f32, String) {
    let mut factor = 0.0;
    let log = captured_logs(|| {
        let engine = Engine::new(&Limits::default()).unwrap();
        engine.use_cache(cache.clone());
        let guest = Guest::load(&engine, wasm).expect("the guest loads");
        let guests = Guests::from_loaded(wasm.parent().unwrap(), &engine, vec![Arc::new(guest)]);
        let sandbox = Sandbox::with_guests(guests, AllowList::all());
        let call = vector_call(&[1.0]);
        sandbox
            .handler("c_scale")
            .expect("served")
            .call_host(&call)
            .expect("the call works whatever the cache holds");
        factor = call.result(0).to_f32()[0];
    });
    (factor, log)
}

/// The cache entry of the guest at `wasm` in `cache`: its artifact and its
/// digest (the files whose names start with the module's sha256).
fn entry(cache: &Path, wasm: &Path) -> (PathBuf, PathBuf) {
    let sha = hex::encode(Sha256::digest(std::fs::read(wasm).unwrap()));
    let find = |ext: &str| {
        std::fs::read_dir(cache)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(sha.as_str())
                    && p.extension().is_some_and(|e| e == ext)
            })
            .unwrap_or_else(|| panic!("no .{ext} for {} in {}", wasm.display(), cache.display()))
    };
    (find("cwasm"), find("sha256"))
}

fn mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn owner(path: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).unwrap().uid()
}

/// A warm cache at `scratch/cache` holding the doubling guest's entry.
fn warm(scratch: &Scratch) -> (PathBuf, ModuleCache) {
    let dir = scratch.path("cache");
    let cache = ModuleCache::open(&dir).expect("a private folder is used");
    let (factor, log) = run(&scratch.double, &cache);
    assert_eq!(factor, 2.0);
    assert!(!log.contains("rejected"), "{log}");
    (dir, cache)
}

/// [`warm`], and the doubling guest's entry there: its artifact and
/// digest.
fn warm_entry(scratch: &Scratch) -> (PathBuf, ModuleCache, PathBuf, PathBuf) {
    let (dir, cache) = warm(scratch);
    let (artifact, digest) = entry(&dir, &scratch.double);
    (dir, cache, artifact, digest)
}

/// Someone's cache at `scratch/name`, warmed by the tripling guest: the
/// folder and the tripling guest's entry there (artifact, digest).
fn tripling_cache(scratch: &Scratch, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch.path(name);
    let cache = ModuleCache::open(&dir).unwrap();
    assert_eq!(run(&scratch.triple, &cache).0, 3.0);
    let (artifact, digest) = entry(&dir, &scratch.triple);
    (dir, artifact, digest)
}

/// Asserts that the doubling guest runs from what `cache` holds, without
/// compiling: `what` says why it should.
fn assert_served_from(scratch: &Scratch, cache: &ModuleCache, what: &str) {
    let (factor, log) = run(&scratch.double, cache);
    assert_eq!(factor, 2.0, "{what}: {log}");
    assert!(!log.contains("compile cache"), "{what}: {log}");
}

/// Asserts that `log` warns that the entry of `wasm`'s artifact was
/// rejected because of `why`, and names `path`.
fn assert_rejected(log: &str, path: &Path, why: &str) {
    assert!(
        log.contains("rejected") && log.contains(why) && log.contains(&path.display().to_string()),
        "expected a warning naming {} and {why:?}: {log}",
        path.display()
    );
}

#[test]
fn every_parent_folder_is_checked_not_only_the_cache_folder() {
    let scratch = Scratch::new();
    // (the parent's mode, its owner, what is wrong, or None: trusted)
    let cases: [(u32, u32, Option<&str>); 6] = [
        (0o770, 0, Some("may be written by others (mode 770)")),
        (0o757, 0, Some("may be written by others (mode 757)")),
        (0o755, OTHER, Some("is owned by uid 65534")),
        // Sticky and owned by someone else: they may replace what is in it.
        (0o1777, OTHER, Some("is owned by uid 65534")),
        // Sticky and root's, as /tmp: only an entry's owner may replace it.
        (0o1777, 0, None),
        (0o755, 0, None),
    ];
    for (i, (parent_mode, parent_owner, wrong)) in cases.into_iter().enumerate() {
        let parent = scratch.path(&format!("parent{i}"));
        std::fs::create_dir(&parent).unwrap();
        std::os::unix::fs::chown(&parent, Some(parent_owner), None).unwrap();
        mode(&parent, parent_mode);
        // The grandparent's too: a parent two levels up is checked as well.
        let dir = parent.join("inner/cache");
        let what = format!("parent {parent_mode:o} owned by {parent_owner}");
        match (ModuleCache::open(&dir), wrong) {
            (Err(e), Some(wrong)) => {
                assert!(
                    e.contains(wrong) && e.contains(&format!("{} ", parent.display())),
                    "{what}: the refusal names the parent and what is wrong: {e}"
                );
                assert!(!dir.exists(), "{what}: nothing is made under it");
            }
            (Ok(cache), None) => {
                let (factor, log) = run(&scratch.double, &cache);
                assert_eq!(factor, 2.0, "{what}");
                assert!(!log.contains("compile cache"), "{what}: {log}");
                let (factor, log) = run(&scratch.double, &cache);
                assert_eq!(factor, 2.0, "{what}");
                assert!(!log.contains("compile cache"), "{what}: {log}");
            }
            (Ok(_), Some(wrong)) => panic!("{what}: used although {wrong}"),
            (Err(e), None) => panic!("{what}: refused: {e}"),
        }
    }
}

#[test]
fn a_cache_folder_made_group_writable_after_opening_is_no_longer_used() {
    let scratch = Scratch::new();
    let (dir, cache) = warm(&scratch);
    mode(&dir, 0o770);
    let (factor, log) = run(&scratch.double, &cache);
    assert_eq!(factor, 2.0);
    assert!(
        log.contains(&dir.display().to_string())
            && log.contains("may be written by others (mode 770)"),
        "{log}"
    );
    mode(&dir, 0o700);
    let (factor, log) = run(&scratch.double, &cache);
    assert_eq!(factor, 2.0);
    assert!(
        !log.contains("compile cache"),
        "used again once private: {log}"
    );
}

#[test]
fn links_to_the_cache_folder_are_followed_only_if_the_user_or_root_made_them() {
    let scratch = Scratch::new();
    let (dir, _) = warm(&scratch);

    // The user's own link to the user's own folder: used, entries found.
    let link = scratch.path("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let cache = ModuleCache::open(&link).expect("the user's link to the user's folder");
    let (factor, log) = run(&scratch.double, &cache);
    assert_eq!(factor, 2.0);
    assert!(!log.contains("compile cache"), "{log}");

    // The same link owned by someone else (as in a sticky folder where
    // others make links): refused.
    lchown(&link, Some(OTHER), None).unwrap();
    let e = ModuleCache::open(&link).unwrap_err();
    assert!(
        e.contains(&link.display().to_string()) && e.contains("a link owned by uid 65534"),
        "{e}"
    );

    // The user's link to someone else's folder: refused.
    let theirs = scratch.path("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(OTHER), None).unwrap();
    mode(&theirs, 0o700);
    let to_theirs = scratch.path("to-theirs");
    std::os::unix::fs::symlink(&theirs, &to_theirs).unwrap();
    let e = ModuleCache::open(&to_theirs).unwrap_err();
    assert!(e.contains("is owned by uid 65534"), "{e}");

    // A link on the way, not the last component: followed on the same terms.
    let parent_link = scratch.path("parent-link");
    std::os::unix::fs::symlink(scratch.tmp.path(), &parent_link).unwrap();
    assert!(ModuleCache::open(&parent_link.join("cache")).is_ok());
    lchown(&parent_link, Some(OTHER), None).unwrap();
    let e = ModuleCache::open(&parent_link.join("cache")).unwrap_err();
    assert!(e.contains("a link owned by uid 65534"), "{e}");
}

#[test]
fn a_cache_folder_swapped_for_a_link_after_opening_is_not_followed() {
    let scratch = Scratch::new();
    let (dir, cache, artifact, digest) = warm_entry(&scratch);

    // Someone makes a folder where the tripling guest's entry sits under
    // the doubling guest's names (what it holds is their choice), moves the
    // cache folder away and links its name to theirs.
    let (other, evil_artifact, evil_digest) = tripling_cache(&scratch, "other");
    std::fs::rename(evil_artifact, other.join(artifact.file_name().unwrap())).unwrap();
    std::fs::rename(evil_digest, other.join(digest.file_name().unwrap())).unwrap();
    std::fs::rename(&dir, scratch.path("moved")).unwrap();
    std::os::unix::fs::symlink(&other, &dir).unwrap();

    // The cache opened before keeps reading the folder it opened.
    assert_served_from(&scratch, &cache, "the folder's name is not looked up again");
}

#[test]
fn an_entry_swapped_for_links_between_check_and_use_is_never_loaded() {
    let scratch = Scratch::new();
    let (dir, cache, artifact, digest) = warm_entry(&scratch);

    // Someone else's files: the tripling guest's entry, in a cache of
    // theirs, with its own digest.
    let (theirs, evil_artifact, evil_digest) = tripling_cache(&scratch, "theirs");
    for path in [&theirs, &evil_artifact, &evil_digest] {
        std::os::unix::fs::chown(path, Some(OTHER), None).unwrap();
    }

    // Once the entry has been checked, and before it is read, both files
    // become links to theirs.
    let (a, d) = (artifact.clone(), digest.clone());
    let swapped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = Arc::clone(&swapped);
    cyxla_sandbox::cache::testing::between_check_and_use(
        &dir,
        Some(Box::new(move |_: &Path| {
            for (path, target) in [(&a, &evil_artifact), (&d, &evil_digest)] {
                std::fs::remove_file(path).unwrap();
                std::os::unix::fs::symlink(target, path).unwrap();
            }
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
        })),
    );
    let (factor, log) = run(&scratch.double, &cache);
    cyxla_sandbox::cache::testing::between_check_and_use(&dir, None);
    assert!(
        swapped.load(std::sync::atomic::Ordering::SeqCst),
        "the swap ran"
    );
    assert_eq!(
        factor, 2.0,
        "the code that ran is the guest's own, not the linked artifact: {log}"
    );

    // Links in place of the entry, from the start: refused, rebuilt.
    let (factor, log) = run(&scratch.double, &cache);
    assert_eq!(factor, 2.0);
    assert!(log.contains("is a link"), "{log}");
    assert_rejected(&log, &artifact, "is a link");
    assert!(
        !std::fs::symlink_metadata(&artifact).unwrap().is_symlink()
            && !std::fs::symlink_metadata(&digest).unwrap().is_symlink(),
        "rebuilt as files"
    );
    assert_eq!(owner(&artifact), 0);
    assert_served_from(&scratch, &cache, "the rebuilt entry is used");
}

#[test]
fn a_replaced_artifact_or_digest_is_refused_and_rebuilt() {
    let scratch = Scratch::new();
    let (dir, cache, artifact, digest) = warm_entry(&scratch);
    let good = std::fs::read(&artifact).unwrap();

    type Spoil<'a> = &'a dyn Fn();
    let replace_artifact_by_theirs = || {
        let tmp = dir.join("replacement");
        std::fs::write(&tmp, &good).unwrap();
        std::os::unix::fs::chown(&tmp, Some(OTHER), None).unwrap();
        std::fs::rename(&tmp, &artifact).unwrap();
    };
    let digest_theirs = || std::os::unix::fs::chown(&digest, Some(OTHER), None).unwrap();
    let digest_writable = || mode(&digest, 0o666);
    let fifo = || {
        std::fs::remove_file(&artifact).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(&artifact)
            .status()
            .expect("mkfifo (coreutils) runs");
        assert!(status.success());
    };
    let cases: [(&str, &Path, Spoil); 4] = [
        // Same bytes, someone else's file: they could change it at will.
        (
            "is owned by uid 65534",
            &artifact,
            &replace_artifact_by_theirs,
        ),
        ("is owned by uid 65534", &digest, &digest_theirs),
        (
            "may be written by others (mode 666)",
            &digest,
            &digest_writable,
        ),
        // Reading a FIFO would wait for a writer forever.
        ("is not a regular file", &artifact, &fifo),
    ];
    for (why, path, spoil) in cases {
        spoil();
        let (factor, log) = run(&scratch.double, &cache);
        assert_eq!(factor, 2.0, "{why}");
        assert_rejected(&log, path, why);
        assert_eq!(std::fs::read(&artifact).unwrap(), good, "{why}: rebuilt");
        assert_eq!((owner(&artifact), owner(&digest)), (0, 0), "{why}");
        assert_served_from(
            &scratch,
            &cache,
            &format!("{why}: the rebuilt entry is used"),
        );
    }
}

#[test]
fn an_entry_moved_under_another_key_is_refused() {
    let scratch = Scratch::new();
    let (dir, cache) = warm(&scratch);
    assert_eq!(run(&scratch.triple, &cache).0, 3.0);
    let (artifact, digest) = entry(&dir, &scratch.double);
    let (other_artifact, other_digest) = entry(&dir, &scratch.triple);
    // A whole, well-formed entry of this user's, written by this host, but
    // for another module: its digest matches its bytes, not this key.
    std::fs::rename(&other_artifact, &artifact).unwrap();
    std::fs::rename(&other_digest, &digest).unwrap();
    let (factor, log) = run(&scratch.double, &cache);
    assert_eq!(factor, 2.0, "the tripling guest's code must not run: {log}");
    assert_rejected(&log, &artifact, "do not match the digest");
}

/// Set, to the home folder to use, in the child that
/// [`a_user_other_than_root_keeps_a_cache_under_folders_it_may_only_search`]
/// starts.
const CHILD: &str = "CYXLA_CACHE_TRUST_CHILD";

#[test]
fn a_user_other_than_root_keeps_a_cache_under_folders_it_may_only_search() {
    use std::os::unix::process::CommandExt as _;
    let scratch = Scratch::new();
    // Root's folder on the way, searchable but not readable by others (as
    // `/home` on some systems), then the other user's home, where their
    // guest is.
    mode(scratch.tmp.path(), 0o711);
    let home = scratch.path("home");
    std::fs::create_dir(&home).unwrap();
    let wasm = home.join("c.wasm");
    std::fs::copy(&scratch.double, &wasm).unwrap();
    for path in [&home, &wasm] {
        std::os::unix::fs::chown(path, Some(OTHER), Some(OTHER)).unwrap();
    }
    mode(&home, 0o700);
    // This test binary, where the other user may run it.
    let exe = scratch.path("cache_trust");
    let me = std::env::current_exe().unwrap();
    if std::fs::hard_link(&me, &exe).is_err() {
        std::fs::copy(&me, &exe).unwrap();
    }
    mode(&exe, 0o755);
    cyxla_tests::run_ok(
        std::process::Command::new(&exe)
            .args([
                common::test_name(module_path!(), "as_another_user").as_str(),
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, &home)
            .uid(OTHER)
            .gid(OTHER),
        &format!("the child as uid {OTHER}"),
    );
    let cache = home.join("cache");
    assert_eq!(owner(&cache), OTHER);
    let (artifact, digest) = entry(&cache, &wasm);
    assert_eq!((owner(&artifact), owner(&digest)), (OTHER, OTHER));
}

/// Run by [`a_user_other_than_root_keeps_a_cache_under_folders_it_may_only_search`]
/// as uid 65534: a cold and a warm load through a cache in the home it
/// names.
#[test]
#[ignore = "run as another user by a_user_other_than_root_keeps_a_cache_under_folders_it_may_only_search"]
fn as_another_user() {
    let home = PathBuf::from(std::env::var_os(CHILD).unwrap_or_else(|| {
        panic!("run by a_user_other_than_root_keeps_a_cache_under_folders_it_may_only_search")
    }));
    assert_eq!(rustix::process::geteuid().as_raw(), OTHER);
    let dir = home.join("cache");
    let cache = ModuleCache::open(&dir).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..2 {
        let (factor, log) = run(&home.join("c.wasm"), &cache);
        assert_eq!(factor, 2.0);
        assert!(!log.contains("compile cache"), "{log}");
    }
}
