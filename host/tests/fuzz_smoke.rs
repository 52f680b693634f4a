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

/// Loop shapes the unrolling translator must get right, each a function
/// `$f (param $n i64) (result i64)` called from exports with several trip
/// counts (`fuzz::unrolled_loops` calls exports without arguments): exits
/// at the top, the bottom and the middle of the body, early `return`,
/// branches to the loop from nested blocks and `if`s, `br_table`, a loop
/// with a result, a trap part-way, stores each iteration, a body that
/// never branches back, one too long to unroll, and sums the second copy
/// reassociates (or must not): in either operand order, in i32 (wrapping),
/// ones whose term is computed from the sum, with exits in each copy.
const LOOP_SHAPES: [&str; 12] = [
    // Exit test at the top, back edge at the bottom (spin_sum).
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $acc i64)
         (block $done (loop $next
           (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
           (local.set $acc (i64.add (local.get $acc) (i64.mul (local.get $i) (local.get $i))))
           (local.set $i (i64.add (local.get $i) (i64.const 1)))
           (br $next)))
         (local.get $acc))"#,
    // do-while with a result: the back edge is a br_if at the end, the
    // loop falls out with its value.
    r#"(func $f (param $n i64) (result i64) (local $i i64)
         (loop $l (result i64)
           (local.set $i (i64.add (local.get $i) (i64.const 3)))
           (i64.mul (local.get $i) (i64.const 7))
           (br_if $l (i64.lt_s (local.get $i) (local.get $n)))))"#,
    // Exit in the middle, with a value, to an outer block; the end of the
    // body is unreachable.
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $x i64)
         (block $out (result i64)
           (loop $l
             (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $i) (i64.const 3))))
             (br_if $out (local.get $x) (i64.ge_u (local.get $i) (local.get $n)))
             (local.set $i (i64.add (local.get $i) (i64.const 1)))
             (br $l))
           (unreachable)))"#,
    // Early return from inside an if.
    r#"(func $f (param $n i64) (result i64) (local $i i64)
         (loop $l
           (if (i64.eq (local.get $i) (i64.div_u (local.get $n) (i64.const 2)))
             (then (return (i64.add (local.get $i) (i64.const 1000)))))
           (local.set $i (i64.add (local.get $i) (i64.const 1)))
           (br_if $l (i64.lt_u (local.get $i) (local.get $n))))
         (local.get $i))"#,
    // Branches to the loop from a nested block and from both arms of an
    // if/else; the body's end falls out of the loop.
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $a i64)
         (loop $l
           (local.set $i (i64.add (local.get $i) (i64.const 1)))
           (block $skip
             (br_if $skip (i64.eqz (i64.rem_u (local.get $i) (i64.const 3))))
             (local.set $a (i64.add (local.get $a) (local.get $i)))
             (br_if $l (i64.lt_u (local.get $i) (local.get $n))))
           (if (i64.lt_u (local.get $i) (local.get $n))
             (then (local.set $a (i64.sub (local.get $a) (i64.const 1))) (br $l))
             (else (local.set $a (i64.mul (local.get $a) (i64.const 2))))))
         (local.get $a))"#,
    // br_table to the loop, to an inner block and out of the loop.
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $a i64)
         (block $out
           (loop $l
             (local.set $i (i64.add (local.get $i) (i64.const 1)))
             (block $inner
               (br_table $l $inner $out $l
                 (select (i32.wrap_i64 (i64.rem_u (local.get $i) (i64.const 4))) (i32.const 2)
                         (i64.lt_u (local.get $i) (local.get $n)))))
             (local.set $a (i64.add (local.get $a) (i64.mul (local.get $i) (i64.const 5))))
             (br $l)))
         (i64.add (local.get $a) (local.get $i)))"#,
    // A trap part-way (division by zero at i = n), after stores.
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $a i64)
         (loop $l
           (i64.store (i32.wrap_i64 (i64.shl (i64.rem_u (local.get $i) (i64.const 64)) (i64.const 3)))
                      (local.get $a))
           (local.set $a (i64.add (local.get $a) (i64.div_s (i64.const 100) (i64.sub (local.get $n) (local.get $i)))))
           (local.set $i (i64.add (local.get $i) (i64.const 1)))
           (br_if $l (i64.lt_u (local.get $i) (i64.const 1000))))
         (local.get $a))"#,
    // A body that never branches back: one pass.
    r#"(func $f (param $n i64) (result i64) (local $i i64)
         (loop $l (local.set $i (i64.add (local.get $n) (i64.const 9))))
         (local.get $i))"#,
    // A loop of f64 and v128 arithmetic (the copies keep the order).
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $x f64) (local $v v128)
         (loop $l
           (local.set $x (f64.add (f64.mul (local.get $x) (f64.const 1.0000001)) (f64.convert_i64_s (local.get $i))))
           (local.set $v (f32x4.add (local.get $v) (f32x4.splat (f32.demote_f64 (local.get $x)))))
           (local.set $i (i64.add (local.get $i) (i64.const 1)))
           (br_if $l (i64.lt_u (local.get $i) (local.get $n))))
         (i64.add (i64.reinterpret_f64 (local.get $x)) (i64x2.extract_lane 1 (local.get $v))))"#,
    // Too long to unroll (more than 32 operators): translated as is.
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $a i64)
         (loop $l
           (local.set $a (i64.add (local.get $a) (i64.const 1)))
           (local.set $a (i64.add (local.get $a) (i64.const 2)))
           (local.set $a (i64.add (local.get $a) (i64.const 3)))
           (local.set $a (i64.add (local.get $a) (i64.const 4)))
           (local.set $a (i64.add (local.get $a) (i64.const 5)))
           (local.set $a (i64.add (local.get $a) (i64.const 6)))
           (local.set $a (i64.rotl (local.get $a) (local.get $i)))
           (local.set $i (i64.add (local.get $i) (i64.const 1)))
           (br_if $l (i64.lt_u (local.get $i) (local.get $n))))
         (local.get $a))"#,
    // i32 sums (wrapping): the term first, one computed from itself, an
    // exit between them.
    r#"(func $f (param $n i64) (result i64) (local $i i32) (local $a i32) (local $b i32)
         (block $out
           (loop $l
             (local.set $a (i32.add (i32.mul (local.get $i) (i32.const 0x9e3779b9)) (local.get $a)))
             (br_if $out (i64.ge_u (i64.extend_i32_u (local.get $i)) (local.get $n)))
             (local.set $b (i32.add (local.get $b)
                                    (i32.add (i32.shr_u (local.get $b) (i32.const 3)) (local.get $i))))
             (local.set $i (i32.add (local.get $i) (i32.const 1)))
             (br $l)))
         (i64.extend_i32_u (i32.xor (local.get $a) (local.get $b))))"#,
    // A sum whose term uses the sum, a plain one, two sums in one
    // statement; the exit test at the bottom.
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $a i64) (local $b i64) (local $c i64)
         (loop $l
           (local.set $a (i64.add (local.get $a) (i64.or (local.get $a) (local.get $i))))
           (local.set $c (i64.add (local.get $c) (i64.mul (local.get $i) (local.get $i))))
           (local.set $b (i64.add (i64.add (local.get $b) (local.get $i)) (i64.mul (local.get $b) (i64.const 3))))
           (local.set $i (i64.add (local.get $i) (i64.const 1)))
           (br_if $l (i64.lt_u (local.get $i) (local.get $n))))
         (i64.xor (i64.xor (local.get $a) (local.get $b)) (local.get $c)))"#,
];

#[test]
fn unrolled_loops_compute_what_plain_loops_do() {
    for (k, shape) in LOOP_SHAPES.iter().enumerate() {
        let calls: String = [0i64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 64, 999, 1000]
            .iter()
            .map(|n| format!("(func (export \"n{n}\") (result i64) (call $f (i64.const {n})))\n"))
            .collect();
        let wat = format!("(module (memory (export \"memory\") 1)\n{shape}\n{calls})");
        let wasm = wat::parse_str(&wat).unwrap_or_else(|e| panic!("shape {k}: {e}"));
        assert_eq!(
            fuzz::unrolled_loops_in(&wasm),
            14,
            "shape {k}: calls compared"
        );
    }
}

#[test]
fn unrolled_loops_over_generated_modules() {
    let mut rng = Rng(0x0c1a_55e5_0000_0005);
    let (mut modules, mut calls) = (0, 0);
    for _ in 0..iterations() / 5 {
        let bytes: Vec<u8> = (0..16384).map(|_| rng.next() as u8).collect();
        let (made, compared) = fuzz::unrolled_loops(&bytes);
        modules += usize::from(made);
        calls += compared;
    }
    eprintln!("{modules} generated modules, {calls} calls compared");
    assert!(
        modules > iterations() / 10 && calls > modules,
        "wasm-smith made {modules} modules with {calls} calls compared"
    );
}
