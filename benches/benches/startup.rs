//! Start-up with 10 guests: load, validate and compile (cold: no compile
//! cache) against load, validate and take the compiled code from the
//! compile cache (warm). Goal P7: warm start at most 20 ms.
//!
//! `cargo bench -p cyxla-benches --bench startup`
//!
//! Both variants run interleaved, in rounds, over the same ten modules
//! (bundled guests) in a folder of their own; the table gives medians. A
//! third variant starts with none of the targets allowed and no cache (the
//! goal: such guests are validated, not compiled).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use cyxla_benches::mode;
use cyxla_benches::report::{self, Met};
use cyxla_host::process::Setup;
use cyxla_sandbox::AllowList;

const GUESTS: usize = 10;
/// Goal P7: a warm start with 10 guests takes at most this long (ms).
const GOAL_P7_MS: f64 = 20.0;

fn setup(folder: PathBuf, cache: Option<PathBuf>, policy: AllowList) -> Setup {
    Setup {
        guests: vec![folder],
        allow: policy,
        cache,
        ..Setup::default()
    }
}

fn start(setup: &Setup) -> Duration {
    let t = Instant::now();
    let sandboxes = setup.sandboxes().expect("load the guests");
    let took = t.elapsed();
    let compiled: usize = sandboxes.iter().map(|s| s.guests().guests().len()).sum();
    let idle: usize = sandboxes.iter().map(|s| s.guests().idle().len()).sum();
    if setup.allow.allows_all() {
        assert_eq!((compiled, idle), (GUESTS, 0), "every guest compiles");
    } else {
        assert_eq!(
            (compiled, idle),
            (0, GUESTS),
            "no guest compiled: none of their targets is allowed"
        );
    }
    took
}

fn bench(_c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("a temp dir");
    let folder = tmp.path().join("guests");
    std::fs::create_dir(&folder).expect("guests folder");
    let modules = cyxla_benches::bundled_modules();
    assert!(
        modules.len() >= GUESTS,
        "{} bundled guests, need {GUESTS}",
        modules.len()
    );
    for m in &modules[..GUESTS] {
        std::fs::copy(m, folder.join(m.file_name().unwrap())).expect("copy a guest");
    }
    let cache = tmp.path().join("cache");
    let cold = setup(folder.clone(), None, AllowList::all());
    let warm = setup(folder.clone(), Some(cache.clone()), AllowList::all());
    let none = setup(folder, None, AllowList::targets(Vec::<String>::new()));
    start(&warm); // fills the cache
    let entries = std::fs::read_dir(&cache).expect("the cache").count();
    assert_eq!(entries, 2 * GUESTS, "an artifact and its digest per guest");
    let rounds = mode::pick(7, 3);
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        times[0].push(start(&cold));
        times[1].push(start(&warm));
        times[2].push(start(&none));
    }
    let [c, w, n] = times.map(|mut t| {
        t.sort();
        t[rounds / 2].as_secs_f64() * 1e3
    });
    println!(
        "\nstart with {GUESTS} guests (load, validate, compile or take from the cache), median of {rounds} interleaved rounds:"
    );
    println!("  cold (no cache)  {c:>9.1} ms");
    println!(
        "  warm (cache)     {w:>9.1} ms   {:.1}x faster; goal P7 <= 20 ms: {}",
        c / w,
        if w <= GOAL_P7_MS { "met" } else { "NOT met" }
    );
    println!(
        "  none allowed, no cache {n:>9.1} ms   {:.1}x faster than cold (validated, not compiled)",
        c / n
    );
    report::result(
        "P7",
        Met::from(w <= GOAL_P7_MS),
        "<=20ms",
        &[("warm_ms", w), ("cold_ms", c), ("none_allowed_ms", n)],
        &format!("warm {w:.1} ms, cold {c:.1} ms; none allowed, no cache: {n:.1} ms"),
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    report::peak_rss("startup");
}
