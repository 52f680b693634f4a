//! The compile cache: a warm start takes compiled guests from it; a
//! tampered, truncated, foreign-owned or others-writable entry is rejected
//! and rebuilt; a cache folder others may write is not used.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{captured_logs, full_guest, run_double};
use cyxla_host::process::Setup;
use cyxla_sandbox::cache::ModuleCache;
use cyxla_sandbox::{AllowList, Engine, Guest, Guests, Limits, Sandbox};

fn setup(dir: &Path, cache: &Path) -> Setup {
    Setup {
        guests: vec![dir.to_owned()],
        allow: AllowList::all(),
        cache: Some(cache.to_owned()),
        ..Setup::default()
    }
}

/// Loads the folder through the cache, checks the guest works, and returns
/// the log.
fn load(setup: &Setup) -> String {
    captured_logs(|| {
        let sandboxes = setup.sandboxes().expect("load");
        let handler = sandboxes[0].handler("c_double").expect("served");
        run_double(&handler);
    })
}

/// Loads one guest through `cache` on this thread (whose log is captured),
/// checks that it works, and returns the log.
fn load_one(wasm: &Path, cache: &Path) -> String {
    captured_logs(|| {
        let engine = Engine::new(&Limits::default()).unwrap();
        engine.use_cache(ModuleCache::open(cache).unwrap());
        let guest = Guest::load(&engine, wasm).expect("load");
        let dir = wasm.parent().unwrap();
        let guests = Guests::from_loaded(dir, &engine, vec![std::sync::Arc::new(guest)]);
        let sandbox = Sandbox::with_guests(guests, AllowList::all());
        run_double(&sandbox.handler("c_double").expect("served"));
    })
}

/// A way to spoil a cache entry.
type Spoil = dyn Fn(&Path);

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn artifact(cache: &Path) -> PathBuf {
    entries(cache)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .expect("an artifact")
}

/// A temporary directory holding `guests/c.wasm`, and that `guests` folder.
fn guests_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("guests");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("c.wasm"), full_guest("c_")).unwrap();
    (tmp, dir)
}

#[test]
fn entries_are_written_once_and_verified_before_use() {
    let (tmp, dir) = guests_dir();
    let cache = tmp.path().join("cache");
    let wasm = dir.join("c.wasm");

    // Cold: the cache is made (0700) and holds an artifact and its digest.
    let log = load_one(&wasm, &cache);
    assert!(!log.contains("rejected"), "{log}");
    let mode = std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert_eq!(entries(&cache).len(), 2, "{:?}", entries(&cache));
    let good = std::fs::read(artifact(&cache)).unwrap();
    let written = std::fs::metadata(artifact(&cache))
        .unwrap()
        .modified()
        .unwrap();

    // Warm: taken from the cache, not written again.
    let log = load_one(&wasm, &cache);
    assert!(!log.contains("rejected"), "{log}");
    assert_eq!(
        std::fs::metadata(artifact(&cache))
            .unwrap()
            .modified()
            .unwrap(),
        written
    );

    // Tampered, truncated, others-writable, foreign-owned: rejected, rebuilt.
    let cases: [(&str, &Spoil); 4] = [
        ("do not match the digest", &|p: &Path| {
            let mut bytes = std::fs::read(p).unwrap();
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x55;
            std::fs::write(p, bytes).unwrap();
        }),
        ("do not match the digest", &|p: &Path| {
            let bytes = std::fs::read(p).unwrap();
            std::fs::write(p, &bytes[..bytes.len() / 3]).unwrap();
        }),
        ("may be written by others", &|p: &Path| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666)).unwrap();
        }),
        ("is owned by uid 65534", &|p: &Path| {
            std::os::unix::fs::chown(p, Some(65534), None).unwrap();
        }),
    ];
    for (why, spoil) in cases {
        spoil(&artifact(&cache));
        let log = load_one(&wasm, &cache);
        assert!(
            log.contains("rejected") && log.contains(why),
            "{why}: {log}"
        );
        assert_eq!(
            std::fs::read(artifact(&cache)).unwrap(),
            good,
            "{why}: rebuilt"
        );
        let log = load_one(&wasm, &cache);
        assert!(
            !log.contains("rejected"),
            "{why}: the rebuilt entry is used: {log}"
        );
    }
}

#[test]
fn a_cache_folder_others_may_write_is_not_used() {
    let (tmp, dir) = guests_dir();
    let cache = tmp.path().join("shared-cache");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = ModuleCache::open(&cache).unwrap_err();
    assert!(err.contains("may be written by others (mode 777)"), "{err}");
    let log = load(&setup(&dir, &cache));
    assert!(log.contains("guests are compiled without it"), "{log}");
    assert!(
        entries(&cache).is_empty(),
        "nothing written to a shared folder"
    );
}

#[test]
fn a_home_without_a_cache_folder_says_what_to_do() {
    let (tmp, dir) = guests_dir();
    // a "home" where no folder can be made (a file stands in the way)
    let home = tmp.path().join("home");
    std::fs::write(&home, b"not a folder").unwrap();
    let log = load(&setup(&dir, &home.join(".cache/cyxla")));
    assert!(
        log.contains("cannot create the compile cache")
            && log.contains("guests are compiled without it")
            && log.contains("CYXLA_CACHE_DIR")
            && log.contains("CYXLA_CACHE=0"),
        "{log}"
    );
}
