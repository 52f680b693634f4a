//! Native copies of the deadline bench's scalar loop (`spin_sum`: Σ i·i
//! for i < n), in the shapes a deadline check can give it, timed side by
//! side on this machine (x86-64 only).
//!
//! The bench's whole calls tell what the check costs `spin_sum` with
//! everything around it; these copies tell the check's own cost from the
//! cost of the loop's shape. Two are the code Cranelift emits for the
//! bench's guest, byte for byte ([`check_emitted`] fails when that code
//! changes); the others are what other ways of placing checks would emit:
//!
//! - `rolled, unchecked`: the loop without checks (the bench's reference),
//! - `rolled, checked`: with a poll-page check (one load) per iteration,
//! - `unrolled, checked, 2 adds/trip`: the body twice per check, each copy
//!   adding its product to the sum (two adds per trip on the chain from
//!   one trip to the next), as Cranelift emitted it before the sums were
//!   reassociated,
//! - `unrolled, no check, 2 adds/trip`: the same without its load,
//! - `unrolled, checked, reassociated`: the two products summed first and
//!   added to the sum once per trip, the first copy's partial sum computed
//!   only on the exit between the copies, as emitted now,
//! - `... partial sum each trip`: the same with the partial sum computed
//!   on every trip (what the reassociation gives without that exit's own
//!   block),
//! - `strip-mined, K`: the rolled loop without checks, run in strips of at
//!   most K iterations with one check between strips (the iteration bound
//!   is a register).
//!
//! Each shape runs `n` iterations alone and right after a 10 MiB copy (as
//! the bench's call copies its operand in), interleaved, and reports the
//! median time per iteration with the interquartile range, which shows
//! when a shape's speed is bimodal.

use std::hint::black_box;
use std::time::Instant;

/// A loop: `f(n, page)` returns Σ i·i (wrapping) for i < n, reading the
/// byte at `page` where it checks.
type LoopFn = unsafe extern "sysv64" fn(u64, *const u8) -> u64;

/// The loop body Cranelift emits for `spin_sum` without checks: `i` in
/// `rdi`, `n` in `rdx`, the sum in `rsi`; 28 bytes, exit just past them.
macro_rules! rolled_bytes {
    () => {
        "0x48,0x3b,0xfa, 0x0f,0x83,0x13,0x00,0x00,0x00, 0x4c,0x8d,0x47,0x01, \
         0x48,0x0f,0xaf,0xff, 0x48,0x03,0xf7, 0x4c,0x89,0xc7, 0xe9,0xe4,0xff,0xff,0xff"
    };
}

/// The loop body Cranelift emits for `spin_sum` with poll-page checks
/// (unrolled twice, one check, the products summed before the sum): the
/// page in `rcx`, `n` in `rdi`, `i` in `r8`, the sum in `rsi`; 52 bytes of
/// loop and the exit between the copies (7), exit just past them.
macro_rules! unrolled_checked_bytes {
    () => {
        "0x4c,0x0f,0xb6,0x09, 0x4c,0x3b,0xc7, 0x0f,0x83,0x2e,0x00,0x00,0x00, \
         0x4d,0x8d,0x50,0x01, 0x4c,0x3b,0xd7, 0x0f,0x83,0x1a,0x00,0x00,0x00, \
         0x4d,0x8d,0x48,0x02, 0x4d,0x0f,0xaf,0xc0, 0x4d,0x0f,0xaf,0xd2, 0x4d,0x03,0xc2, \
         0x49,0x03,0xf0, 0x4d,0x89,0xc8, 0xe9,0xcc,0xff,0xff,0xff, \
         0x4d,0x0f,0xaf,0xc0, 0x49,0x03,0xf0"
    };
}

/// A strip-mined loop of at most `$k` iterations per check, named `$name`.
macro_rules! strip_mined {
    ($name:literal, $k:literal) => {
        concat!(
            ".p2align 6\n",
            $name,
            ":\n",
            "mov %rsi,%rcx\n xor %r8d,%r8d\n xor %esi,%esi\n",
            // The strip's header: check, leave at n, bound = min(n, i + K).
            "2: movzbq (%rcx),%r9\n cmp %rdi,%r8\n {{disp32}} jae 4f\n",
            "mov %rdi,%rdx\n sub %r8,%rdx\n lea ",
            $k,
            "(%r8),%r11\n cmp $",
            $k,
            ",%rdx\n mov %rdi,%rdx\n cmova %r11,%rdx\n",
            // The rolled loop against the bound, on a line as emitted.
            ".p2align 6\n",
            "3: cmp %rdx,%r8\n {{disp32}} jae 2b\n lea 1(%r8),%r9\n imul %r8,%r8\n",
            "add %r8,%rsi\n mov %r9,%r8\n {{disp32}} jmp 3b\n",
            "4: mov %rsi,%rax\n ret\n",
        )
    };
}

// Each function takes `n` in `rdi` and the page in `rsi`, returns the sum
// in `rax`, and writes only registers the System V ABI lets a callee
// clobber (rax, rcx, rdx, rsi, rdi, r8-r11, flags). Loops start on a
// 64-byte line, as Cranelift places loop headers.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    ".p2align 6",
    "cyxla_bench_loop_rolled:",
    "mov %rdi,%rdx",
    "xor %edi,%edi",
    "xor %esi,%esi",
    ".p2align 6",
    concat!(".byte ", rolled_bytes!()),
    "mov %rsi,%rax",
    "ret",
    // The rolled loop with a check in front: the jump back covers it.
    ".p2align 6",
    "cyxla_bench_loop_rolled_checked:",
    "mov %rsi,%rcx",
    "mov %rdi,%rdx",
    "xor %edi,%edi",
    "xor %esi,%esi",
    ".p2align 6",
    "movzbq (%rcx),%r9",
    ".byte 0x48,0x3b,0xfa, 0x0f,0x83,0x13,0x00,0x00,0x00, 0x4c,0x8d,0x47,0x01",
    ".byte 0x48,0x0f,0xaf,0xff, 0x48,0x03,0xf7, 0x4c,0x89,0xc7, 0xe9,0xe0,0xff,0xff,0xff",
    "mov %rsi,%rax",
    "ret",
    // Before reassociation, as Cranelift emitted it: 55 bytes.
    ".p2align 6",
    "cyxla_bench_loop_two_adds:",
    "mov %rsi,%rcx",
    "xor %r8d,%r8d",
    "xor %esi,%esi",
    ".p2align 6",
    ".byte 0x4c,0x0f,0xb6,0x09, 0x4c,0x3b,0xc7, 0x0f,0x83,0x2a,0x00,0x00,0x00",
    ".byte 0x4d,0x8d,0x48,0x01, 0x4d,0x89,0xc2, 0x4d,0x0f,0xaf,0xd0, 0x49,0x03,0xf2",
    ".byte 0x4c,0x3b,0xcf, 0x0f,0x83,0x13,0x00,0x00,0x00, 0x49,0x81,0xc0,0x02,0x00,0x00,0x00",
    ".byte 0x4d,0x0f,0xaf,0xc9, 0x49,0x03,0xf1, 0xe9,0xc9,0xff,0xff,0xff",
    "mov %rsi,%rax",
    "ret",
    // The same without its first four bytes (the check); the jump back is
    // four bytes shorter.
    ".p2align 6",
    "cyxla_bench_loop_two_adds_no_check:",
    "xor %r8d,%r8d",
    "xor %esi,%esi",
    ".p2align 6",
    ".byte 0x4c,0x3b,0xc7, 0x0f,0x83,0x2a,0x00,0x00,0x00",
    ".byte 0x4d,0x8d,0x48,0x01, 0x4d,0x89,0xc2, 0x4d,0x0f,0xaf,0xd0, 0x49,0x03,0xf2",
    ".byte 0x4c,0x3b,0xcf, 0x0f,0x83,0x13,0x00,0x00,0x00, 0x49,0x81,0xc0,0x02,0x00,0x00,0x00",
    ".byte 0x4d,0x0f,0xaf,0xc9, 0x49,0x03,0xf1, 0xe9,0xcd,0xff,0xff,0xff",
    "mov %rsi,%rax",
    "ret",
    ".p2align 6",
    "cyxla_bench_loop_reassociated:",
    "mov %rsi,%rcx",
    "xor %r8d,%r8d",
    "xor %esi,%esi",
    ".p2align 6",
    concat!(".byte ", unrolled_checked_bytes!()),
    "mov %rsi,%rax",
    "ret",
    // Reassociated, acc + i² computed on every trip (into r11) for the
    // exit between the copies.
    ".p2align 6",
    "cyxla_bench_loop_partial_each_trip:",
    "mov %rsi,%rcx",
    "xor %r8d,%r8d",
    "xor %esi,%esi",
    ".p2align 6",
    "2: movzbq (%rcx),%r9",
    "cmp %rdi,%r8",
    "{{disp32}} jae 4f",
    "lea 1(%r8),%r9",
    "mov %r8,%r10",
    "imul %r8,%r10",
    "lea (%rsi,%r10),%r11",
    "cmp %rdi,%r9",
    "{{disp32}} jae 3f",
    "imul %r9,%r9",
    "add %r10,%r9",
    "add %r9,%rsi",
    ".byte 0x49,0x81,0xc0,0x02,0x00,0x00,0x00",
    "{{disp32}} jmp 2b",
    "3: mov %r11,%rsi",
    "4: mov %rsi,%rax",
    "ret",
    strip_mined!("cyxla_bench_loop_strip_1024", "1024"),
    strip_mined!("cyxla_bench_loop_strip_4096", "4096"),
    strip_mined!("cyxla_bench_loop_strip_65536", "65536"),
    options(att_syntax)
);

#[cfg(target_arch = "x86_64")]
unsafe extern "sysv64" {
    fn cyxla_bench_loop_rolled(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_rolled_checked(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_two_adds(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_two_adds_no_check(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_reassociated(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_partial_each_trip(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_strip_1024(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_strip_4096(n: u64, page: *const u8) -> u64;
    fn cyxla_bench_loop_strip_65536(n: u64, page: *const u8) -> u64;
}

/// The shapes, the reference first.
#[cfg(target_arch = "x86_64")]
fn shapes() -> [(&'static str, LoopFn); 9] {
    [
        ("rolled, unchecked (emitted)", cyxla_bench_loop_rolled),
        ("rolled, checked", cyxla_bench_loop_rolled_checked),
        ("unrolled, checked, 2 adds/trip", cyxla_bench_loop_two_adds),
        (
            "unrolled, no check, 2 adds/trip",
            cyxla_bench_loop_two_adds_no_check,
        ),
        (
            "unrolled, checked, reassociated (emitted)",
            cyxla_bench_loop_reassociated,
        ),
        (
            "... partial sum each trip",
            cyxla_bench_loop_partial_each_trip,
        ),
        ("strip-mined, K = 1024", cyxla_bench_loop_strip_1024),
        ("strip-mined, K = 4096", cyxla_bench_loop_strip_4096),
        ("strip-mined, K = 65536", cyxla_bench_loop_strip_65536),
    ]
}

/// The bytes of a `.byte` list (the copies' machine code, as listed in
/// their macros); also `matmul_loops`'.
#[cfg(target_arch = "x86_64")]
pub(crate) fn bytes(listed: &str) -> Vec<u8> {
    listed
        .split(',')
        .map(|b| {
            let b = b.trim().trim_start_matches("0x");
            u8::from_str_radix(b, 16).expect("a byte in hex")
        })
        .collect()
}

/// Checks that the copies are the code Cranelift emits for `spin_sum`:
/// `unchecked` and `checked` are that guest's module precompiled without
/// deadline checks and with poll-page checks.
///
/// # Panics
///
/// If either loop is not found in its module, with what to update.
#[cfg(target_arch = "x86_64")]
pub fn check_emitted(unchecked: &[u8], checked: &[u8]) {
    for (what, module, listed) in [
        ("rolled, unchecked", unchecked, rolled_bytes!()),
        (
            "unrolled, checked, reassociated",
            checked,
            unrolled_checked_bytes!(),
        ),
    ] {
        let code = bytes(listed);
        if !module.windows(code.len()).any(|w| w == code) {
            let file =
                std::env::temp_dir().join(format!("cyxla-spin-{}.cwasm", what.replace(", ", "-")));
            let wrote = std::fs::write(&file, module);
            panic!(
                "the `{what}` loop is no longer the code Cranelift emits for spin_sum: \
                 update benches/src/loop_shapes.rs from the disassembly of the module \
                 (`objdump -d {}`{})",
                file.display(),
                wrote.err().map_or(String::new(), |e| format!(
                    ", which could not be written: {e}"
                ))
            );
        }
    }
}

/// A readable page for the checks (never protected: the copies measure the
/// check's cost, not its trap).
#[repr(align(4096))]
struct Page([u8; 4096]);
static PAGE: Page = Page([0; 4096]);

/// Times every shape, `rounds` interleaved rounds of `n` iterations each,
/// alone and after a 10 MiB copy, and prints the table. Returns nothing
/// to report: the figures explain the bench's `spin_sum` row.
///
/// # Panics
///
/// If a shape computes a wrong sum.
#[cfg(target_arch = "x86_64")]
pub fn report(n: u64, rounds: usize) {
    let want = (0..n).fold(0u64, |a, i| a.wrapping_add(i.wrapping_mul(i)));
    let shapes = shapes();
    let src = vec![1u8; 10 << 20];
    let mut dst = vec![0u8; 10 << 20];
    // [copy first?][shape] -> ns per iteration, one per round.
    let mut samples = vec![vec![Vec::with_capacity(rounds); shapes.len()]; 2];
    for round in 0..rounds {
        for (copy, per_shape) in samples.iter_mut().enumerate() {
            for k in 0..shapes.len() {
                // Rotate the order so that no shape always follows another.
                let s = (k + round) % shapes.len();
                if copy == 1 {
                    dst.copy_from_slice(&src);
                    black_box(&mut dst);
                }
                let start = Instant::now();
                // SAFETY: each shape reads only the byte at the page it is
                // given (`PAGE`, live for the program) and writes only
                // caller-saved registers (see the assembly above).
                let got = unsafe { (shapes[s].1)(black_box(n), PAGE.0.as_ptr()) };
                let took = start.elapsed();
                assert_eq!(got, want, "{}: wrong sum", shapes[s].0);
                per_shape[s].push(took.as_secs_f64() * 1e9 / n as f64);
            }
        }
    }
    let stats = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let q = |f: usize| v[(v.len() - 1) * f / 4];
        (q(2), q(1), q(3))
    };
    println!(
        "\nspin_sum's loop, native copies: ns per iteration, median [q1-q3] of {rounds} \
         interleaved rounds of {n} iterations, and the median's ratio to the first row:"
    );
    println!(
        "  {:<42} {:>26} {:>26}",
        "shape", "alone", "after a 10 MiB copy"
    );
    let mut base = [0.0; 2];
    let mut rows: Vec<String> = shapes
        .iter()
        .map(|(name, _)| format!("  {name:<42}"))
        .collect();
    for (copy, per_shape) in samples.iter_mut().enumerate() {
        for (s, v) in per_shape.iter_mut().enumerate() {
            let (m, q1, q3) = stats(v);
            if s == 0 {
                base[copy] = m;
            }
            rows[s].push_str(&format!(
                " {m:>6.3} [{q1:.3}-{q3:.3}] {:>5.2}x",
                m / base[copy]
            ));
        }
    }
    for row in rows {
        println!("{row}");
    }
}

/// The copies are x86-64 code: nothing to compare elsewhere.
#[cfg(not(target_arch = "x86_64"))]
pub fn check_emitted(_unchecked: &[u8], _checked: &[u8]) {}

/// Prints why nothing is measured on other architectures.
#[cfg(not(target_arch = "x86_64"))]
pub fn report(_n: u64, _rounds: usize) {
    println!("\nspin_sum's loop, native copies: x86-64 only, not measured here");
}
