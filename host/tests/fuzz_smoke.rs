//! The fuzz targets of `fuzz/` (cargo-fuzz, nightly) as a stable test: each
//! target's body runs over a deterministic corpus of pseudo-random inputs
//! from a seeded generator, plus a few hand-picked ones, so that CI compiles
//! and exercises them without nightly. `CYXLA_FUZZ_ITERATIONS` runs more.

use cyxla_host::fuzz;

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let len = (self.next() as usize) % (max + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn iterations() -> usize {
    std::env::var("CYXLA_FUZZ_ITERATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3000)
}

#[test]
fn call_layout_over_random_calls() {
    let mut rng = Rng(0x0c1a_55e5_0000_0001);
    fuzz::call_layout(&[]);
    fuzz::call_layout(&[0xff; 512]);
    for _ in 0..iterations() {
        fuzz::call_layout(&rng.bytes(600));
    }
}

/// Random TOML-ish text from the side file's vocabulary, so that many
/// inputs parse.
fn side_file_text(rng: &mut Rng) -> Vec<u8> {
    const KEYS: [&str; 23] = [
        "memory",
        "targets",
        "memory_budget",
        "locals",
        "blocks",
        "compile_threads",
        "copy_threads",
        "table_elements",
        "stack",
        "instances",
        "call_timeout",
        "instantiate_timeout",
        "instance_wait",
        "module_size",
        "functions",
        "function_size",
        "log_bytes",
        "error_message",
        "error_handles",
        "tick",
        "interrupt",
        "fresh_instances",
        "fuel",
    ];
    const VALUES: [&str; 16] = [
        "1",
        "0",
        "-1",
        "4096",
        "\"64 MiB\"",
        "\"5 GiB\"",
        "\"1.5KiB\"",
        "\"250ms\"",
        "\"2s\"",
        "\"0s\"",
        "\"1e9s\"",
        "true",
        "\"poll\"",
        "\"signal\"",
        "1.5",
        "\"x\"",
    ];
    let mut text = String::new();
    for _ in 0..rng.next() % 5 {
        let key = KEYS[(rng.next() % KEYS.len() as u64) as usize];
        let value = VALUES[(rng.next() % VALUES.len() as u64) as usize];
        text.push_str(&format!("{key} = {value}\n"));
    }
    let mut bytes = text.into_bytes();
    if rng.next().is_multiple_of(4) && !bytes.is_empty() {
        let at = (rng.next() as usize) % bytes.len();
        bytes[at] = rng.next() as u8;
    }
    bytes
}

#[test]
fn limits_files_over_random_text() {
    let mut rng = Rng(0x0c1a_55e5_0000_0002);
    fuzz::limits_file(b"memory = \"64 MiB\"\ncall_timeout = \"2s\"\n");
    fuzz::limits_file(b"\xff\xfe");
    for _ in 0..iterations() {
        fuzz::limits_file(&side_file_text(&mut rng));
        fuzz::limits_file(&rng.bytes(64));
    }
}

#[test]
fn limit_flags_over_random_text() {
    let mut rng = Rng(0x0c1a_55e5_0000_0003);
    fuzz::limit_flag(b"memory=64MiB");
    fuzz::limit_flag(b"call_timeout=1e400s");
    fuzz::limit_flag(b"memory='; fuel = 3");
    for _ in 0..iterations() {
        let text = side_file_text(&mut rng);
        let line = String::from_utf8_lossy(&text);
        let line = line.lines().next().unwrap_or("").replacen(" = ", "=", 1);
        fuzz::limit_flag(line.trim_matches('"').as_bytes());
        fuzz::limit_flag(&rng.bytes(32));
    }
}

#[test]
fn guest_modules_bundled_malformed_and_looping() {
    // Every bundled guest: loaded, each (i32) -> i32 export called with a
    // frame it does not expect; errors name the guest.
    let dir = cyxla_tests::workspace_root().join("guests/out");
    let mut modules = 0;
    for entry in std::fs::read_dir(&dir).expect("guests/out (scripts/setup.sh builds it)") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wasm") {
            fuzz::guest_module(&std::fs::read(&path).unwrap());
            modules += 1;
        }
    }
    assert!(modules >= 9, "{modules} bundled guests");
    // Not wasm, truncated wasm, and random bytes after the magic.
    let mut rng = Rng(0x0c1a_55e5_0000_0004);
    fuzz::guest_module(b"");
    fuzz::guest_module(b"\0asm\x01\0\0\0");
    for _ in 0..iterations() / 10 {
        let mut bytes = b"\0asm\x01\0\0\0".to_vec();
        bytes.extend(rng.bytes(256));
        fuzz::guest_module(&bytes);
    }
    // A guest that loops in its handler: stopped by its deadline
    // (`fuzz::GUEST_DEADLINE`) every time, within `fuzz::GUEST_HANG`.
    let looping = looping_guest();
    let started = std::time::Instant::now();
    fuzz::guest_module(&looping);
    // Two calls, each stopped by its deadline.
    assert!(
        started.elapsed() >= 2 * fuzz::GUEST_DEADLINE,
        "the looping guest ran {:?}",
        started.elapsed()
    );
}

/// A guest whose handler loops forever. (Its `cyxla_alloc` gives the host
/// an aligned 64 KiB inside its memory: one that does not is rejected at
/// load and never runs.)
fn looping_guest() -> Vec<u8> {
    wat::parse_str(
        r#"(module
             (memory (export "memory") 2)
             (func (export "cyxla_abi_version") (result i32) (i32.const 1))
             (func (export "cyxla_api") (result i32) (i32.const 1024))
             (func (export "cyxla_alloc") (param i32 i32) (result i32) (i32.const 65536))
             (func (export "handler") (param i32) (result i32) (loop $l (br $l)) (i32.const 0)))"#,
    )
    .unwrap()
}

/// Modules of inputs on which the guest_module fuzzer died of a signal
/// (libFuzzer's "deadly signal", no panic): each after many executions in
/// one process (43310ccd after 201 308, with the alternate-stack fix of
/// the signal deadlines, a mechanism since removed), none when run alone
/// (100 or 300 times). Run here many times each, beside a module that
/// loops until its deadline, so that deadline interrupts land while they
/// run. A cause that fits was fixed later (the signal handler rewrote a
/// builtin's return address while a call hook ran inside the builtin);
/// 600 000 executions since, half under signal deadlines, found nothing.
#[test]
fn guest_module_fuzz_findings() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let mut modules = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wasm") {
            modules.push(std::fs::read(&path).unwrap());
        }
    }
    assert!(
        modules.len() >= 2,
        "{} modules in {}",
        modules.len(),
        dir.display()
    );
    let looping = looping_guest();
    let started = std::time::Instant::now();
    for _ in 0..50 {
        for module in &modules {
            fuzz::guest_module(module);
            fuzz::guest_module(&looping);
        }
    }
    // Each run of the looping module spends two deadlines.
    let runs = 50 * modules.len() as u32;
    assert!(
        started.elapsed() >= 2 * runs * fuzz::GUEST_DEADLINE,
        "{runs} runs of a looping module in {:?}",
        started.elapsed()
    );
}
