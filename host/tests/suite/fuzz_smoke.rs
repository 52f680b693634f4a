//! The fuzz targets of `fuzz/` (cargo-fuzz, nightly) as a stable test: each
//! target's body runs over a deterministic corpus of pseudo-random inputs
//! from a seeded generator, plus a few hand-picked ones, so that CI compiles
//! and exercises them without nightly. `CYXLA_FUZZ_ITERATIONS` runs more.

use crate::common;

use cyxla_sandbox::fuzz;

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

/// A guest of the test prelude (the guest ABI by hand, with an allocator
/// that gives the host its regions) whose one handler loops forever. It
/// declares no targets: `fuzz::guest_module` declares one per handler.
fn looping_guest() -> Vec<u8> {
    common::wasm(&format!(
        r#"(module {}
             (func (export "handler") (param i32) (result i32) (loop $l (br $l)) (i32.const 0)))"#,
        common::PRELUDE
    ))
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
/// never branches back, one of 37 operators (unrolled: the limit is 64),
/// one too long to unroll, and sums the second copy
/// reassociates (or must not): in either operand order, in i32 (wrapping),
/// ones whose term is computed from the sum, with exits in each copy.
const LOOP_SHAPES: [&str; 13] = [
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
    // 37 operators, unrolled since the limit is 64; the first copy's exit
    // (after its `br_if`) is a cold block.
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
    // Too long to unroll (more than 64 operators): translated as is.
    r#"(func $f (param $n i64) (result i64) (local $i i64) (local $a i64)
         (loop $l
           (local.set $a (i64.add (local.get $a) (i64.const 1)))
           (local.set $a (i64.xor (local.get $a) (i64.const 2)))
           (local.set $a (i64.add (local.get $a) (i64.const 3)))
           (local.set $a (i64.xor (local.get $a) (i64.const 4)))
           (local.set $a (i64.add (local.get $a) (i64.const 5)))
           (local.set $a (i64.xor (local.get $a) (i64.const 6)))
           (local.set $a (i64.add (local.get $a) (i64.const 7)))
           (local.set $a (i64.xor (local.get $a) (i64.const 8)))
           (local.set $a (i64.add (local.get $a) (i64.const 9)))
           (local.set $a (i64.xor (local.get $a) (i64.const 10)))
           (local.set $a (i64.add (local.get $a) (i64.const 11)))
           (local.set $a (i64.xor (local.get $a) (i64.const 12)))
           (local.set $a (i64.add (local.get $a) (i64.const 13)))
           (local.set $a (i64.xor (local.get $a) (i64.const 14)))
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

/// Little-endian bytes of `values` as a WAT data string.
fn wat_bytes(bytes: impl IntoIterator<Item = u8>) -> String {
    bytes.into_iter().map(|b| format!("\\{b:02x}")).collect()
}

/// Finite f32s of every magnitude (subnormal, tiny, ordinary, huge,
/// negative zero), as WAT data: no product or sum of two of them is NaN.
fn float_data() -> String {
    let floats = [
        1.5f32, -2.25, 3.0e10, 1.0e-40, -0.0, 7.0, 0.1, -1.0e20, 65536.0, -3.5, 1.0e-3, 2.0, 9.5e5,
        -6.0e-39, 123.25, -0.75,
    ];
    wat_bytes(floats.iter().flat_map(|f| f.to_le_bytes()))
}

/// Pseudo-random bytes (fixed) for the integer shapes' memory.
fn noise_data(n: usize) -> String {
    let mut rng = Rng(0x0c1a_55e5_da7a_0001);
    wat_bytes((0..n).map(|_| rng.next() as u8))
}

/// Exports named `"{f} {args}"` that call `$f` with fixed arguments
/// (`(i32.const 1) (i32.const 2)` …) and return what it returns: the
/// cases random arguments rarely hit exactly.
fn fixed_calls(f: &str, results: &str, cases: &[&[i64]], types: &[&str]) -> String {
    cases
        .iter()
        .map(|args| {
            let name: Vec<String> = args.iter().map(i64::to_string).collect();
            let consts: String = args
                .iter()
                .zip(types)
                .map(|(a, t)| format!("({t}.const {a})"))
                .collect();
            format!(
                "(func (export \"{f} {}\") {results} (call ${f} {consts}))\n",
                name.join(" ")
            )
        })
        .collect()
}

/// The shapes of the differential oracle (`fuzz::differential_in`), each
/// a module whose exported functions are called with random arguments
/// biased toward the edges of memory and of i32 arithmetic, plus exports
/// with fixed arguments for the exact edges. Each targets a patch of the
/// series (vendor/cranelift-codegen/CYXLA-PATCH.md and
/// vendor/wasmtime-internal-cranelift/CYXLA-PATCH.md):
///
/// - `lea`: `i32.add` address arithmetic feeding loads and stores with
///   constant offsets at the end of memory (in bounds, one past, sums that
///   wrap to an in-bounds index), and `(x + y) + c` as a value (cranelift
///   patch 1, the two-component `lea`).
/// - `vectors`: `v128.load` feeding `f32x4.mul`, `i32x4.add` and other
///   lane operations, as either operand, at aligned and unaligned
///   addresses, straddling the end of memory and one past it, in a loop
///   too, and a load whose one use comes after a store over what it read
///   (cranelift patch 2, loads sunk through a bitcast; its SSE forms with
///   the engine without AVX).
/// - `multi_value`: loops with parameters and several results, and exits
///   with several values (the translator's unrolling, patch 2 of the
///   Cranelift integration).
/// - `tee_exits`: `br_if` out of a loop with a `local.tee`d value or
///   condition (unrolling).
/// - `sums`: i32 and i64 accumulator loops, sums in either operand order,
///   terms loaded from memory, exits in the body (in each unrolled copy),
///   a trap part-way after stores (unrolling and the reassociated sums,
///   patch 3 of the Cranelift integration; loop alignment, cranelift
///   patch 3, for every loop).
/// - `arith_branches`: `if` and `br_if` on the result of an i32 or i64
///   `sub` or `add` (of a constant or of a register; zero in 32 bits but
///   not in 64), the result also read after the branch, in the exit's
///   value and after the loop, and once stored between the `sub` and the
///   branch (cranelift patch 5, a branch tests its arithmetic's flags).
fn differential_shapes() -> Vec<(&'static str, String)> {
    const PAIRS: [&[i64]; 12] = [
        &[0, 0],
        &[1, 0],
        &[0, 1],
        &[4, -4],
        &[-4, 3],
        &[-1, 1],
        &[0x8000_0000, 0x8000_0000],
        &[0x7fff_ffff, 0x7fff_ffff],
        &[-65536, 65536],
        &[2, 1],
        &[-8, 9],
        &[3, -1],
    ];
    const TYPES2: [&str; 2] = ["i32", "i32"];
    let mut lea = format!(
        r#"(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{}")
  (data (i32.const 65472) "{}")
  ;; (x + y) + c as a value, both operand orders, i32 and i64.
  (func $sum3 (export "sum3") (param $x i32) (param $y i32) (result i32)
    (i32.add (i32.add (local.get $x) (local.get $y)) (i32.const 65532)))
  (func $sum3c (export "sum3c") (param $x i32) (param $y i32) (result i32)
    (i32.add (i32.const -7) (i32.add (local.get $x) (local.get $y))))
  (func $sum3_64 (export "sum3_64") (param $x i64) (param $y i64) (result i64)
    (i64.add (i64.add (local.get $x) (local.get $y)) (i64.const -123456789)))
  (func $sum_scaled (export "sum_scaled") (param $x i32) (param $y i32) (result i32)
    (i32.add (i32.add (local.get $x) (i32.shl (local.get $y) (i32.const 2))) (i32.const 100)))
  ;; Loads whose index is an i32.add, with offsets at the end of memory.
  (func $ld32 (export "ld32") (param $p i32) (param $q i32) (result i32)
    (i32.load offset=65532 (i32.add (local.get $p) (local.get $q))))
  (func $ld64 (export "ld64") (param $p i32) (param $q i32) (result i64)
    (i64.load offset=65528 (i32.add (local.get $p) (local.get $q))))
  (func $ld8 (export "ld8") (param $p i32) (param $q i32) (result i32)
    (i32.load8_u offset=65535 (i32.add (local.get $p) (local.get $q))))
  (func $ld16 (export "ld16") (param $p i32) (param $q i32) (result i32)
    (i32.load16_s offset=65534 (i32.add (local.get $p) (local.get $q))))
  (func $ldf (export "ldf") (param $p i32) (param $q i32) (result f64)
    (f64.load offset=65528 (i32.add (local.get $p) (local.get $q))))
  (func $ldc (export "ldc") (param $p i32) (param $q i32) (result i32)
    (i32.load offset=65500 (i32.add (i32.add (local.get $p) (local.get $q)) (i32.const 32))))
  (func $ld_low (export "ld_low") (param $p i32) (param $q i32) (result i32)
    (i32.load offset=4 (i32.add (local.get $q) (local.get $p))))
  (func $ld_scaled (export "ld_scaled") (param $p i32) (param $q i32) (result i64)
    (i64.load offset=65528 (i32.add (local.get $p) (i32.shl (local.get $q) (i32.const 3)))))
  ;; Stores the same way (a trapping store writes nothing), and a
  ;; read-modify-write through two address computations.
  (func $st32 (export "st32") (param $p i32) (param $q i32)
    (i32.store offset=65532 (i32.add (local.get $p) (local.get $q))
      (i32.add (local.get $p) (i32.const 0x01020304))))
  (func $st64 (export "st64") (param $p i32) (param $q i32)
    (i64.store offset=65528 (i32.add (local.get $p) (local.get $q)) (i64.const 0x0102030405060708)))
  (func $st16 (export "st16") (param $p i32) (param $q i32)
    (i32.store16 offset=65534 (i32.add (local.get $p) (local.get $q)) (local.get $q)))
  (func $rmw (export "rmw") (param $p i32) (param $q i32) (result i32)
    (i32.store offset=65528 (i32.add (local.get $p) (local.get $q))
      (i32.add (i32.load offset=65528 (i32.add (local.get $q) (local.get $p))) (i32.const 0x01010101)))
    (i32.load offset=65528 (i32.add (local.get $p) (local.get $q))))
"#,
        noise_data(64),
        noise_data(64)
    );
    for (f, results) in [
        ("sum3", "(result i32)"),
        ("sum3c", "(result i32)"),
        ("sum_scaled", "(result i32)"),
        ("ld32", "(result i32)"),
        ("ld64", "(result i64)"),
        ("ld8", "(result i32)"),
        ("ld16", "(result i32)"),
        ("ldf", "(result f64)"),
        ("ldc", "(result i32)"),
        ("ld_low", "(result i32)"),
        ("ld_scaled", "(result i64)"),
        ("st32", ""),
        ("st64", ""),
        ("st16", ""),
        ("rmw", "(result i32)"),
    ] {
        lea.push_str(&fixed_calls(f, results, &PAIRS, &TYPES2));
    }
    lea.push_str(&fixed_calls(
        "sum3_64",
        "(result i64)",
        &[&[0, 0], &[-1, 1], &[i64::MAX, 1], &[0xffff_ffff, 1]],
        &["i64", "i64"],
    ));
    lea.push(')');

    // Addresses for the vector loads: aligned and not, the last vector,
    // straddling the end, one past.
    const VECTOR_CASES: [&[i64]; 12] = [
        &[0, 0],
        &[1, 0],
        &[3, 5],
        &[8, 0],
        &[65520, 0],
        &[65519, 0],
        &[65521, 0],
        &[65528, 0],
        &[65536, 0],
        &[65504, 16],
        &[65504, 9],
        &[-16, 16],
    ];
    let mut vectors = format!(
        r#"(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{floats}{floats}")
  (data (i32.const 65408) "{floats}{floats}")
  ;; NaN lanes made canonical: the payload of a computed NaN is not
  ;; specified (no product of the data is NaN, but one of what the
  ;; stores below leave may be).
  (func $canon32 (param $v v128) (result v128)
    (v128.bitselect (v128.const i32x4 0x7fc00000 0x7fc00000 0x7fc00000 0x7fc00000)
      (local.get $v) (f32x4.ne (local.get $v) (local.get $v))))
  (func $canon64 (param $v v128) (result v128)
    (v128.bitselect (v128.const i64x2 0x7ff8000000000000 0x7ff8000000000000)
      (local.get $v) (f64x2.ne (local.get $v) (local.get $v))))
  (func $fmul (export "fmul") (param $p i32) (param $q i32) (result v128)
    (call $canon32 (f32x4.mul (v128.load (local.get $p)) (v128.load offset=16 (local.get $q)))))
  (func $fmul_r (export "fmul_r") (param $p i32) (param $k i32) (result v128)
    (call $canon32 (f32x4.mul (f32x4.splat (f32.convert_i32_s (local.get $k)))
                              (v128.load (local.get $p)))))
  (func $fadd (export "fadd") (param $p i32) (param $q i32) (result v128)
    (call $canon32 (f32x4.add (v128.load offset=32 (i32.add (local.get $p) (local.get $q)))
                              (v128.load (local.get $q)))))
  (func $fsub_l (export "fsub_l") (param $p i32) (param $k i32) (result v128)
    (call $canon32 (f32x4.sub (v128.load (local.get $p)) (f32x4.splat (f32.convert_i32_s (local.get $k))))))
  (func $fsub_r (export "fsub_r") (param $p i32) (param $k i32) (result v128)
    (call $canon32 (f32x4.sub (f32x4.splat (f32.convert_i32_s (local.get $k))) (v128.load (local.get $p)))))
  (func $dmul (export "dmul") (param $p i32) (param $q i32) (result v128)
    (call $canon64 (f64x2.mul (v128.load (local.get $p)) (v128.load (local.get $q)))))
  (func $iadd (export "iadd") (param $p i32) (param $q i32) (result v128)
    (i32x4.add (v128.load (i32.add (local.get $p) (local.get $q))) (v128.load offset=32 (local.get $p))))
  (func $isub_l (export "isub_l") (param $p i32) (param $k i32) (result v128)
    (i32x4.sub (v128.load (local.get $p)) (i32x4.splat (local.get $k))))
  (func $isub_r (export "isub_r") (param $p i32) (param $k i32) (result v128)
    (i32x4.sub (i32x4.splat (local.get $k)) (v128.load (local.get $p))))
  (func $imul (export "imul") (param $p i32) (param $q i32) (result v128)
    (i32x4.mul (v128.load (local.get $p)) (v128.load (local.get $q))))
  (func $i16add (export "i16add") (param $p i32) (param $q i32) (result v128)
    (i16x8.add_sat_s (v128.load (local.get $p)) (v128.load (local.get $q))))
  (func $i8sub (export "i8sub") (param $p i32) (param $q i32) (result v128)
    (i8x16.sub (v128.load (local.get $q)) (v128.load (local.get $p))))
  (func $i64add (export "i64add") (param $p i32) (param $q i32) (result v128)
    (i64x2.add (v128.load offset=8 (local.get $p)) (v128.load (local.get $q))))
  (func $bits (export "bits") (param $p i32) (param $q i32) (result v128)
    (v128.xor (v128.and (v128.load (local.get $p)) (v128.load (local.get $q)))
              (v128.or (v128.load offset=1 (local.get $p)) (v128.load offset=3 (local.get $q)))))
  (func $cmp (export "cmp") (param $p i32) (param $q i32) (result v128)
    (i32x4.gt_s (v128.load (local.get $p)) (v128.load (local.get $q))))
  ;; A load, then a store over what it read, then the loaded value's one
  ;; use: the load may not be sunk past the store into the use.
  (func $load_store_fmul (export "load_store_fmul") (param $p i32) (param $q i32) (result v128)
    (local $v v128)
    (local.set $v (v128.load (local.get $p)))
    (v128.store (local.get $p) (v128.load offset=16 (local.get $q)))
    (call $canon32 (f32x4.mul (local.get $v) (v128.load (local.get $p)))))
  (func $load_store_iadd (export "load_store_iadd") (param $p i32) (param $q i32) (result v128)
    (local $v v128)
    (local.set $v (v128.load (local.get $p)))
    (i32.store (local.get $p) (local.get $q))
    (i32x4.add (v128.load (local.get $q)) (local.get $v)))
  ;; The bitcast's value used twice: the load is lowered once.
  (func $twice (export "twice") (param $p i32) (param $q i32) (result v128)
    (local $v v128)
    (local.set $v (v128.load (local.get $p)))
    (i32x4.add (i32x4.mul (local.get $v) (v128.load (local.get $q))) (local.get $v)))
  ;; Stores of loaded arithmetic, then an f32x4 sum over a strip that may
  ;; run off the end part-way.
  (func $store_mul (export "store_mul") (param $p i32) (param $q i32)
    (v128.store offset=16 (local.get $q)
      (i32x4.mul (v128.load (local.get $p)) (v128.load offset=65504 (i32.const 0)))))
  (func $fsum (export "fsum") (param $p i32) (param $n i32) (result v128) (local $acc v128)
    (local.set $n (i32.and (local.get $n) (i32.const 63)))
    (block $out
      (loop $l
        (br_if $out (i32.eqz (local.get $n)))
        (local.set $acc (f32x4.add (local.get $acc) (v128.load (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $l)))
    (call $canon32 (local.get $acc)))
  ;; C[c..] += x * B[c + 48..] for 1 to 8 trips of 16 floats, the back
  ;; edge a br_if at the end (the kernels bench's matmul loop: 49
  ;; operators, unrolled; B overlaps what the trip before stored); a trip
  ;; past the end of memory traps part-way through its stores.
  (func $axpy (export "axpy") (param $c i32) (param $n i32) (result v128) (local $b i32) (local $x v128)
    (local.set $n (i32.add (i32.and (local.get $n) (i32.const 7)) (i32.const 1)))
    (local.set $b (i32.add (local.get $c) (i32.const 48)))
    (local.set $x (f32x4.splat (f32.convert_i32_s (local.get $n))))
    (loop $l
      (v128.store (local.get $c) (f32x4.add (v128.load (local.get $c))
        (f32x4.mul (local.get $x) (v128.load (local.get $b)))))
      (v128.store offset=16 (local.get $c) (f32x4.add (v128.load offset=16 (local.get $c))
        (f32x4.mul (local.get $x) (v128.load offset=16 (local.get $b)))))
      (v128.store offset=32 (local.get $c) (f32x4.add (v128.load offset=32 (local.get $c))
        (f32x4.mul (local.get $x) (v128.load offset=32 (local.get $b)))))
      (v128.store offset=48 (local.get $c) (f32x4.add (v128.load offset=48 (local.get $c))
        (f32x4.mul (local.get $x) (v128.load offset=48 (local.get $b)))))
      (local.set $c (i32.add (local.get $c) (i32.const 64)))
      (local.set $b (i32.add (local.get $b) (i32.const 64)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (call $canon32 (v128.load offset=65472 (i32.const 0))))
  (func $isum (export "isum") (param $p i32) (param $n i32) (result v128) (local $acc v128)
    (local.set $n (i32.and (local.get $n) (i32.const 63)))
    (loop $l
      (local.set $acc (i32x4.add (v128.load offset=65000 (local.get $p)) (local.get $acc)))
      (local.set $p (i32.add (local.get $p) (i32.const 12)))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $acc))
"#,
        floats = float_data()
    );
    for f in [
        "fmul",
        "fmul_r",
        "fadd",
        "fsub_l",
        "fsub_r",
        "dmul",
        "iadd",
        "isub_l",
        "isub_r",
        "imul",
        "i16add",
        "i8sub",
        "i64add",
        "bits",
        "cmp",
        "load_store_fmul",
        "load_store_iadd",
        "twice",
    ] {
        vectors.push_str(&fixed_calls(f, "(result v128)", &VECTOR_CASES, &TYPES2));
    }
    vectors.push_str(&fixed_calls("store_mul", "", &VECTOR_CASES, &TYPES2));
    vectors.push_str(&fixed_calls(
        "axpy",
        "(result v128)",
        &[
            &[0, 7],
            &[65408, 0],
            &[65408, 1],
            &[65280, 2],
            &[65280, 3],
            &[65000, 7],
            &[65472, 0],
        ],
        &TYPES2,
    ));
    for f in ["fsum", "isum"] {
        vectors.push_str(&fixed_calls(
            f,
            "(result v128)",
            &[
                &[0, 8],
                &[65408, 8],
                &[65409, 8],
                &[65408, 9],
                &[65480, 7],
                &[65000, 40],
            ],
            &TYPES2,
        ));
    }
    vectors.push(')');

    const LOOP_CASES: [&[i64]; 12] = [
        &[0, 0],
        &[1, 0],
        &[2, 1],
        &[3, 2],
        &[4, 3],
        &[5, 5],
        &[7, 3],
        &[8, 8],
        &[9, 4],
        &[17, 16],
        &[100, 37],
        &[1023, 1000],
    ];
    let mut multi_value = String::from(
        r#"(module
  (memory (export "memory") 1)
  ;; A loop with parameters and results: the values travel round it.
  (func $mv (export "mv") (param $n i32) (param $k i32) (result i32 i64)
    (local $i i32) (local $a i32) (local $b i64)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (local.get $k) (i64.const 1)
    (loop $l (param i32 i64) (result i32 i64)
      (local.set $b) (local.set $a)
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (i32.add (local.get $a) (local.get $i))
      (i64.add (i64.mul (local.get $b) (i64.const 3)) (i64.extend_i32_u (local.get $i)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))
  ;; An exit with two values from the middle, and the fall-through.
  (func $mv_exit (export "mv_exit") (param $n i32) (param $stop i32) (result i32 i32)
    (local $i i32) (local $a i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (block $out (result i32 i32)
      (loop $l
        (local.set $a (i32.add (local.get $a) (i32.mul (local.get $i) (i32.const 3))))
        (br_if $out (local.get $a) (local.get $i) (i32.eq (local.get $i) (local.get $stop)))
        (drop) (drop)
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
      (local.get $a) (i32.const -1)))
  ;; A loop whose three results are left by its last iteration.
  (func $mv_result (export "mv_result") (param $n i32) (param $k i32) (result f64 i32 i64)
    (local $i i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (loop $l (result f64 i32 i64)
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (f64.mul (f64.convert_i32_s (local.get $i)) (f64.convert_i32_s (local.get $k)))
      (i32.xor (local.get $i) (local.get $k))
      (i64.mul (i64.extend_i32_s (local.get $i)) (i64.extend_i32_s (local.get $k)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))
  ;; Values through a loop with parameters, stored each round.
  (func $mv_store (export "mv_store") (param $n i32) (param $k i32) (result i32 i32)
    (local $i i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (local.get $k) (i32.const 0)
    (loop $l (param i32 i32) (result i32 i32)
      (local.set $i)
      (i32.store offset=60000 (i32.shl (i32.and (local.get $i) (i32.const 255)) (i32.const 2)))
      (i32.load offset=60000 (i32.shl (i32.and (local.get $i) (i32.const 255)) (i32.const 2)))
      (i32.add (i32.const 1))
      (local.tee $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))
"#,
    );
    for (f, results) in [
        ("mv", "(result i32 i64)"),
        ("mv_exit", "(result i32 i32)"),
        ("mv_result", "(result f64 i32 i64)"),
        ("mv_store", "(result i32 i32)"),
    ] {
        multi_value.push_str(&fixed_calls(f, results, &LOOP_CASES, &TYPES2));
    }
    multi_value.push(')');

    let mut tee_exits = format!(
        r#"(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{}")
  ;; The value of the exit is tee'd, and the condition reads it.
  (func $tee (export "tee") (param $n i32) (param $lim i32) (result i32) (local $x i32) (local $i i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (block $out (result i32)
      (loop $l
        (drop (br_if $out (local.tee $x (i32.add (local.get $x) (i32.mul (local.get $i) (local.get $i))))
                          (i32.gt_u (local.get $x) (local.get $lim))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
      (i32.sub (i32.const 0) (local.get $x))))
  ;; The back edge's condition is tee'd.
  (func $tee_cond (export "tee_cond") (param $n i32) (param $k i32) (result i32) (local $i i32) (local $s i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (loop $l
      (local.set $s (i32.add (local.get $s) (i32.load8_u (i32.add (local.get $i) (local.get $k)))))
      (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (local.get $n))))
    (i32.add (local.get $s) (i32.mul (local.get $i) (i32.const 1000))))
  ;; The tee'd counter is the condition itself.
  (func $tee_count (export "tee_count") (param $n i32) (param $k i32) (result i64) (local $s i64)
    (local.set $n (i32.add (i32.and (local.get $n) (i32.const 1023)) (i32.const 1)))
    (loop $l
      (local.set $s (i64.add (local.get $s) (i64.load8_s (i32.and (i32.add (local.get $n) (local.get $k)) (i32.const 1023)))))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (local.get $s))
  ;; Two tees in one exit: its value and its condition; an i64 exit.
  (func $tee_two (export "tee_two") (param $n i32) (param $k i32) (result i64) (local $x i64) (local $c i32) (local $i i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (block $out (result i64)
      (loop $l
        (drop (br_if $out (local.tee $x (i64.add (local.get $x) (i64.extend_i32_u (local.get $i))))
                          (local.tee $c (i32.eq (i32.and (local.get $i) (i32.const 15)) (i32.and (local.get $k) (i32.const 15))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
      (i64.sub (local.get $x) (i64.extend_i32_u (local.get $c)))))
"#,
        noise_data(1024)
    );
    for (f, results) in [
        ("tee", "(result i32)"),
        ("tee_cond", "(result i32)"),
        ("tee_count", "(result i64)"),
        ("tee_two", "(result i64)"),
    ] {
        tee_exits.push_str(&fixed_calls(f, results, &LOOP_CASES, &TYPES2));
    }
    tee_exits.push(')');

    let mut sums = format!(
        r#"(module
  (memory (export "memory") 1)
  (data (i32.const 0) "{}")
  ;; i64 sums in both operand orders, one of a loaded term; an exit
  ;; between the sums and the back edge.
  (func $acc64 (export "acc64") (param $n i32) (param $stop i32) (result i64) (local $i i32) (local $s i64) (local $t i64)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (block $out
      (loop $l
        (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (i32.mul (local.get $i) (local.get $i)))))
        (local.set $t (i64.add (i64.load (i32.and (i32.shl (local.get $i) (i32.const 3)) (i32.const 0xff8))) (local.get $t)))
        (br_if $out (i32.eq (local.get $i) (local.get $stop)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))
    (i64.xor (local.get $s) (i64.rotl (local.get $t) (i64.const 17))))
  ;; i32 sums (wrapping), the exit first in the body, with the sum as its
  ;; value.
  (func $acc32 (export "acc32") (param $n i32) (param $stop i32) (result i32) (local $i i32) (local $a i32) (local $b i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (block $out (result i32)
      (loop $l
        (br_if $out (i32.xor (local.get $a) (local.get $b)) (i32.eq (local.get $i) (local.get $stop)))
        (drop)
        (local.set $a (i32.add (i32.load (i32.and (i32.shl (local.get $i) (i32.const 2)) (i32.const 0xffc))) (local.get $a)))
        (local.set $b (i32.add (local.get $b) (i32.mul (local.get $i) (i32.const 0x9e3779b9))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
      (i32.sub (local.get $a) (local.get $b))))
  ;; A sum whose exit tests the sum itself.
  (func $acc_bound (export "acc_bound") (param $n i32) (param $lim i32) (result i32) (local $i i32) (local $s i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (block $out
      (loop $l
        (local.set $s (i32.add (local.get $s) (i32.load8_u (local.get $i))))
        (br_if $out (i32.gt_u (local.get $s) (local.get $lim)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))
    (i32.add (local.get $s) (i32.shl (local.get $i) (i32.const 16))))
  ;; Stores each iteration, then a load at an index from the arguments
  ;; that runs off the end part-way (the stores before it stay).
  (func $acc_trap (export "acc_trap") (param $base i32) (param $n i32) (result i64) (local $i i32) (local $s i64)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (loop $l
      (i64.store offset=32768 (i32.shl (i32.and (local.get $i) (i32.const 511)) (i32.const 3)) (local.get $s))
      (local.set $s (i64.add (i64.load32_u offset=65000 (i32.add (local.get $base) (i32.shl (local.get $i) (i32.const 2)))) (local.get $s)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $s))
  ;; Two sums in one statement, and a division that traps when i reaches
  ;; stop (a trap in the middle of an unrolled copy).
  (func $acc_div (export "acc_div") (param $n i32) (param $stop i32) (result i64) (local $i i32) (local $a i64) (local $b i64)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (loop $l
      (local.set $a (i64.add (i64.add (local.get $a) (i64.extend_i32_s (local.get $i))) (local.get $b)))
      (local.set $b (i64.add (i64.div_s (i64.const 1000) (i64.extend_i32_s (i32.sub (local.get $stop) (local.get $i)))) (local.get $b)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (i64.xor (local.get $a) (local.get $b)))
"#,
        noise_data(4096)
    );
    for (f, results) in [
        ("acc64", "(result i64)"),
        ("acc32", "(result i32)"),
        ("acc_bound", "(result i32)"),
        ("acc_div", "(result i64)"),
    ] {
        sums.push_str(&fixed_calls(f, results, &LOOP_CASES, &TYPES2));
    }
    sums.push_str(&fixed_calls(
        "acc_trap",
        "(result i64)",
        &[
            &[0, 100],
            &[500, 9],
            &[528, 9],
            &[532, 3],
            &[-4, 5],
            &[100, 1023],
        ],
        &TYPES2,
    ));
    sums.push(')');

    let mut arith_branches = String::from(
        r#"(module
  (memory (export "memory") 1)
  ;; `if` on a sub or an add of the arguments, its result also read in
  ;; both arms: i32 (0x80000000 + 0x80000000 is zero in 32 bits, not in
  ;; 64) and i64 (the arguments shifted into the high half).
  (func $if_sub32 (export "if_sub32") (param $a i32) (param $b i32) (result i32) (local $d i32)
    (if (result i32) (local.tee $d (i32.sub (local.get $a) (local.get $b)))
      (then (i32.add (local.get $d) (i32.const 1000)))
      (else (i32.sub (local.get $d) (i32.const 7)))))
  (func $if_add32 (export "if_add32") (param $a i32) (param $b i32) (result i32) (local $d i32)
    (if (result i32) (local.tee $d (i32.add (local.get $a) (local.get $b)))
      (then (i32.xor (local.get $d) (i32.const 0x5555)))
      (else (i32.sub (local.get $d) (i32.const 7)))))
  (func $if_add32c (export "if_add32c") (param $a i32) (param $b i32) (result i32)
    (if (result i32) (i32.add (local.get $a) (i32.const -4))
      (then (local.get $b)) (else (i32.const 77))))
  (func $if_sub64 (export "if_sub64") (param $a i32) (param $b i32) (result i64) (local $d i64)
    (if (result i64) (i64.ne (local.tee $d (i64.sub (i64.extend_i32_s (local.get $a)) (i64.extend_i32_s (local.get $b))))
                             (i64.const 0))
      (then (i64.add (local.get $d) (i64.const 1000)))
      (else (i64.sub (local.get $d) (i64.const 7)))))
  (func $if_add64 (export "if_add64") (param $a i32) (param $b i32) (result i64) (local $d i64)
    (if (result i64) (i64.ne (local.tee $d (i64.add (i64.shl (i64.extend_i32_u (local.get $a)) (i64.const 32))
                                                    (i64.shl (i64.extend_i32_u (local.get $b)) (i64.const 32))))
                             (i64.const 0))
      (then (i64.rotl (local.get $d) (i64.const 7)))
      (else (i64.sub (local.get $d) (i64.const 7)))))
  ;; Loops counted down to zero by a sub or an add of a constant, i32 and
  ;; i64, the counter read after the loop too.
  (func $down32 (export "down32") (param $n i32) (param $k i32) (result i32) (local $s i32)
    (local.set $n (i32.add (i32.and (local.get $n) (i32.const 1023)) (i32.const 1)))
    (loop $l
      (local.set $s (i32.add (local.get $s) (i32.mul (local.get $n) (local.get $k))))
      (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (i32.add (local.get $s) (local.get $n)))
  (func $down64 (export "down64") (param $n i32) (param $k i32) (result i64) (local $c i64) (local $s i64)
    (local.set $c (i64.extend_i32_u (i32.add (i32.and (local.get $n) (i32.const 1023)) (i32.const 1))))
    (loop $l
      (local.set $s (i64.xor (i64.rotl (local.get $s) (i64.const 5))
                             (i64.mul (local.get $c) (i64.extend_i32_s (local.get $k)))))
      (br_if $l (i64.ne (local.tee $c (i64.add (local.get $c) (i64.const -1))) (i64.const 0))))
    (i64.add (local.get $s) (local.get $c)))
  ;; Steps by a register until the sum reaches zero exactly (it starts a
  ;; multiple of the step below zero).
  (func $step (export "step") (param $n i32) (param $k i32) (result i32) (local $x i32) (local $d i32) (local $t i32)
    (local.set $d (i32.or (i32.and (local.get $k) (i32.const 15)) (i32.const 1)))
    (local.set $x (i32.sub (i32.const 0)
                           (i32.mul (i32.add (i32.and (local.get $n) (i32.const 255)) (i32.const 1)) (local.get $d))))
    (loop $l
      (local.set $t (i32.add (i32.rotl (local.get $t) (i32.const 3)) (local.get $x)))
      (br_if $l (local.tee $x (i32.add (local.get $x) (local.get $d)))))
    (i32.xor (local.get $t) (local.get $x)))
  ;; The counter stored between its sub and the branch.
  (func $stored (export "stored") (param $n i32) (param $k i32) (result i64) (local $s i64)
    (local.set $n (i32.add (i32.and (local.get $n) (i32.const 1023)) (i32.const 1)))
    (loop $l
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (i32.store (i32.shl (i32.and (local.get $n) (i32.const 255)) (i32.const 2)) (i32.add (local.get $n) (local.get $k)))
      (local.set $s (i64.add (local.get $s)
                             (i64.load32_u (i32.shl (i32.and (i32.add (local.get $n) (local.get $k)) (i32.const 255)) (i32.const 2)))))
      (br_if $l (local.get $n)))
    (local.get $s))
  ;; An exit with a value when a sub reaches zero, the loop counted up.
  (func $exit_value (export "exit_value") (param $n i32) (param $k i32) (result i32) (local $d i32)
    (local.set $n (i32.and (local.get $n) (i32.const 1023)))
    (local.set $k (i32.and (local.get $k) (i32.const 2047)))
    (block $out (result i32)
      (loop $l
        (br_if $out (i32.mul (local.get $n) (i32.const 3))
                    (i32.eqz (local.tee $d (i32.sub (local.get $n) (local.get $k)))))
        (drop)
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $n) (i32.const 2048))))
      (i32.sub (i32.const -1) (local.get $d))))
"#,
    );
    for (f, results) in [
        ("if_sub32", "(result i32)"),
        ("if_add32", "(result i32)"),
        ("if_add32c", "(result i32)"),
        ("if_sub64", "(result i64)"),
        ("if_add64", "(result i64)"),
    ] {
        arith_branches.push_str(&fixed_calls(f, results, &PAIRS, &TYPES2));
    }
    for (f, results) in [
        ("down32", "(result i32)"),
        ("down64", "(result i64)"),
        ("step", "(result i32)"),
        ("stored", "(result i64)"),
        ("exit_value", "(result i32)"),
    ] {
        arith_branches.push_str(&fixed_calls(f, results, &LOOP_CASES, &TYPES2));
    }
    arith_branches.push(')');

    vec![
        ("lea", lea),
        ("vectors", vectors),
        ("multi_value", multi_value),
        ("tee_exits", tee_exits),
        ("sums", sums),
        ("arith_branches", arith_branches),
    ]
}

/// How many functions `wat` exports: every export of the shapes but their
/// memory is a function.
fn exported_funcs(wat: &str) -> usize {
    wat.matches("(export \"").count() - wat.matches("(memory (export").count()
}

/// Every shape of [`differential_shapes`], through the differential oracle
/// with eight argument seeds: the host's engine, with and without AVX,
/// computes what wasmi does, every call compared.
#[test]
fn differential_shapes_agree_with_wasmi() {
    let started = std::time::Instant::now();
    for (name, wat) in differential_shapes() {
        let wasm = wat::parse_str(&wat).unwrap_or_else(|e| panic!("shape {name}: {e}"));
        let exports = exported_funcs(&wat);
        assert!(exports >= 20, "shape {name}: {exports} exported functions");
        for seed in 0..8 {
            assert_eq!(
                fuzz::differential_in(&wasm, 0x5eed_0000 + seed),
                exports,
                "shape {name}, seed {seed}: calls compared"
            );
        }
    }
    eprintln!("differential shapes in {:?}", started.elapsed());
}

/// wasm-smith modules biased toward memory, vector and loop code
/// (`fuzz::differential`), through the differential oracle.
/// `CYXLA_FUZZ_SEED` (a number) draws another sequence of modules, for long
/// runs.
#[test]
fn differential_over_generated_modules() {
    let seed = std::env::var("CYXLA_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(0x0c1a_55e5_0000_0006, |s| s | 1);
    let mut rng = Rng(seed);
    let (mut modules, mut calls) = (0, 0);
    let started = std::time::Instant::now();
    for _ in 0..iterations() / 10 {
        let bytes: Vec<u8> = (0..16384).map(|_| rng.next() as u8).collect();
        let (made, compared) = fuzz::differential(&bytes);
        modules += usize::from(made);
        calls += compared;
    }
    eprintln!(
        "{modules} generated modules, {calls} calls compared with wasmi in {:?}",
        started.elapsed()
    );
    assert!(
        modules > iterations() / 20 && calls > modules,
        "wasm-smith made {modules} modules with {calls} calls compared"
    );
}
