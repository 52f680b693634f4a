//! Native copies of the inner loop of the kernels bench's matmul
//! (`benches/kernels/matmul.cc`, goal P3), as the sandbox compiles the
//! guest and as clang compiles it natively, timed side by side on this
//! machine under one driver (x86-64 only).
//!
//! The bench's whole calls tell the guest's code from native's; these
//! copies tell the inner loop's share of that from the rest of the
//! function (the loops around it, which the copies replace with one
//! driver of their own). Two are the code the compilers emit, byte for
//! byte ([`check_emitted`] fails when that code changes); the others are
//! what other code generation would emit, or did:
//!
//! - `guest, as emitted`: the loop Cranelift emits for the guest, unrolled
//!   (the engine's patch wasmtime-internal-cranelift/06): two trips of 16
//!   floats per poll-page check, the first copy's exit a branch out to a
//!   cold block (patch 05),
//! - `guest, as emitted, without its check`: the same bytes without the
//!   check's load,
//! - `guest, rolled (before patch 06)`: the loop as Cranelift emitted it
//!   before those patches, one check per trip (kept by hand: nothing
//!   checks it against the engine any more), and variants of it:
//! - `rolled, without its check`: the same bytes without the check's load,
//! - `rolled, C from one register`: `C`'s loads and stores addressed from
//!   one register (a `lea` more per trip) instead of base and index,
//! - `rolled, one check per 2 trips`: the body twice per check, leaving
//!   between the copies when the floats run out (by hand, before the
//!   engine unrolled this loop),
//! - `rolled, a load per 8 trips, counted`: a count in a register taken
//!   down each trip, the check's load only when it reaches zero,
//! - `native (clang -O3)`: the loop of the native build (8 floats a trip),
//!   the reference.
//!
//! Each copy runs the whole 256×256 product (its `i` and `p` loops in Rust,
//! the same for every copy), is checked against a scalar product computed
//! in the same order (bit for bit: no copy contracts a multiply and an
//! add), and reports the median time of interleaved rounds.

/// The matrices' order, as in the bench's P3 case.
pub const N: usize = 256;

/// The guest's loop as Cranelift emits it, 251 bytes: its poll-page check
/// (`guest_unrolled_check_bytes`, `movzbq (%rax),%rsi`), the first copy of
/// a trip of 16 floats with its exit test (`guest_first_copy_bytes`, up to
/// `sub $0x10,%rsi`), a `je` out (rel32, to a cold block after the
/// function: not listed, its displacement depends on the function), the
/// second copy (`guest_second_copy_bytes`, up to `sub $0x20,%r9`), and the
/// `jne` back to the check (`guest_unrolled_jump_back_bytes`, by -251). The
/// heap's base is in `rbx`, the poll page in `rax`, `C`'s row at `r15` and
/// `B`'s at `r13` (32-bit offsets into the heap), the byte offset of the
/// trip in `rdi`, the floats left in `r9`, `A[i][p]` in every lane of
/// `xmm1`; it clobbers `rsi`, `r11`, `r12`, `xmm2` and `xmm3`.
macro_rules! guest_unrolled_check_bytes {
    () => {
        "0x48,0x0f,0xb6,0x30"
    };
}

/// The part the two copies share: from the `lea` of `B`'s address into
/// `r12` to the last store into `C`. The first copy starts with the `lea`s
/// of `C`'s and `B`'s offsets and `C`'s first load, and ends with its exit
/// test (`mov %r9,%rsi`, `sub $0x10,%rsi`); the second computes its offsets
/// from `rdi + 0x40` and ends by stepping the index and the count (`add
/// $0x80,%edi`, `sub $0x20,%r9`).
macro_rules! guest_copy_body_bytes {
    () => {
        "0x4c, 0x8d, 0x24, 0x33, 0xc5, 0xf0, 0x59, 0x1c, 0x33, 0xc5, 0xe8, 0x58, 0xd3, 0xc4, 0xa1, 0x78, \
         0x11, 0x14, 0x1b, 0xc4, 0xa1, 0x7a, 0x6f, 0x54, 0x1b, 0x30, 0xc4, 0xc1, 0x70, 0x59, 0x5c, 0x24, \
         0x30, 0xc5, 0xe8, 0x58, 0xd3, 0xc4, 0xa1, 0x78, 0x11, 0x54, 0x1b, 0x30, 0xc4, 0xa1, 0x7a, 0x6f, \
         0x54, 0x1b, 0x20, 0xc4, 0xc1, 0x70, 0x59, 0x5c, 0x24, 0x20, 0xc5, 0xe8, 0x58, 0xd3, 0xc4, 0xa1, \
         0x78, 0x11, 0x54, 0x1b, 0x20, 0xc4, 0xa1, 0x7a, 0x6f, 0x54, 0x1b, 0x10, 0xc4, 0xc1, 0x70, 0x59, \
         0x5c, 0x24, 0x10, 0xc5, 0xe8, 0x58, 0xd3, 0xc4, 0xa1, 0x78, 0x11, 0x54, 0x1b, 0x10"
    };
}

/// See `guest_unrolled_check_bytes`.
macro_rules! guest_first_copy_bytes {
    () => {
        concat!(
            "0x46, 0x8d, 0x1c, 0x3f, 0xc4, 0xa1, 0x7a, 0x6f, 0x14, 0x1b, 0x42, 0x8d, 0x34, 0x2f, ",
            guest_copy_body_bytes!(),
            ", 0x4c, 0x89, 0xce, 0x48, 0x83, 0xee, 0x10"
        )
    };
}

/// See `guest_unrolled_check_bytes`.
macro_rules! guest_second_copy_bytes {
    () => {
        concat!(
            "0x8d, 0x77, 0x40, 0x46, 0x8d, 0x1c, 0x3e, 0xc4, 0xa1, 0x7a, 0x6f, 0x14, 0x1b, 0x41, 0x03, 0xf5, ",
            guest_copy_body_bytes!(),
            ", 0x81, 0xc7, 0x80, 0x00, 0x00, 0x00, 0x49, 0x83, 0xe9, 0x20"
        )
    };
}

/// See `guest_unrolled_check_bytes`.
macro_rules! guest_unrolled_jump_back_bytes {
    () => {
        "0x0f,0x85,0x05,0xff,0xff,0xff"
    };
}

/// The guest's loop as Cranelift emitted it before the engine's patches
/// wasmtime-internal-cranelift/05 and 06 unrolled it, 129 bytes in three
/// parts: its
/// poll-page check (`guest_check_bytes`, `movzbq (%rax),%rdi`), one trip
/// of 16 floats (`guest_trip_bytes`) and the jump back to the check
/// (`guest_jump_back_bytes`, `jne` by -129). The heap's base is in `rbx`,
/// the poll page in `rax`, `C`'s row at `r15` and `B`'s at `r13` (32-bit
/// offsets into the heap), the byte offset of the trip in `r9`, the floats
/// left in `rsi` (the trip ends with `sub $0x10,%rsi`, whose flags the
/// jump reads), `A[i][p]` in every lane of `xmm1`; it clobbers `rdi`,
/// `r12`, `r14`, `xmm2` and `xmm3`. The rolled variants below are built of
/// the same parts, so they differ from this code only where their names
/// say (it was the code Cranelift emitted, checked byte for byte, until the
/// unrolling).
macro_rules! guest_check_bytes {
    () => {
        "0x48,0x0f,0xb6,0x38"
    };
}

/// See `guest_check_bytes`.
macro_rules! guest_trip_bytes {
    () => {
        "0x47,0x8d,0x34,0x39, 0xc4,0xa1,0x7a,0x6f,0x14,0x33, \
         0x43,0x8d,0x3c,0x29, 0x4c,0x8d,0x24,0x3b, 0xc5,0xf0,0x59,0x1c,0x3b, 0xc5,0xe8,0x58,0xd3, \
         0xc4,0xa1,0x78,0x11,0x14,0x33, 0xc4,0xa1,0x7a,0x6f,0x54,0x33,0x30, \
         0xc4,0xc1,0x70,0x59,0x5c,0x24,0x30, 0xc5,0xe8,0x58,0xd3, 0xc4,0xa1,0x78,0x11,0x54,0x33,0x30, \
         0xc4,0xa1,0x7a,0x6f,0x54,0x33,0x20, 0xc4,0xc1,0x70,0x59,0x5c,0x24,0x20, 0xc5,0xe8,0x58,0xd3, \
         0xc4,0xa1,0x78,0x11,0x54,0x33,0x20, 0xc4,0xa1,0x7a,0x6f,0x54,0x33,0x10, \
         0xc4,0xc1,0x70,0x59,0x5c,0x24,0x10, 0xc5,0xe8,0x58,0xd3, 0xc4,0xa1,0x78,0x11,0x54,0x33,0x10, \
         0x41,0x81,0xc1,0x40,0x00,0x00,0x00, 0x48,0x83,0xee,0x10"
    };
}

/// See `guest_check_bytes`.
macro_rules! guest_jump_back_bytes {
    () => {
        "0x0f,0x85,0x7f,0xff,0xff,0xff"
    };
}

/// The native build's loop as clang emits it (54 bytes): `B`'s row plus
/// 16 bytes in `r12`, `C`'s in `r8`, the float index in `rsi` (8 a trip)
/// up to `rbx`, `A[i][p]` in every lane of `xmm1`.
macro_rules! native_loop_bytes {
    () => {
        "0x41,0x0f,0x10,0x54,0xb4,0xf0, 0x41,0x0f,0x10,0x1c,0xb4, 0x0f,0x59,0xd1, 0x0f,0x59,0xd9, \
         0x41,0x0f,0x10,0x64,0xb0,0xf0, 0x0f,0x58,0xe2, 0x41,0x0f,0x10,0x14,0xb0, 0x0f,0x58,0xd3, \
         0x41,0x0f,0x11,0x64,0xb0,0xf0, 0x41,0x0f,0x11,0x14,0xb0, 0x48,0x83,0xc6,0x08, \
         0x48,0x39,0xf3, 0x75,0xca"
    };
}

/// Saves the callee-saved registers the loops use and sets up the rolled
/// guest loop's registers from `(heap, c_row, b_row, n, x, page)` (System
/// V: `rdi`, `esi`, `edx`, `rcx`, `xmm0`, `r8`).
#[cfg(target_arch = "x86_64")]
macro_rules! guest_prologue {
    () => {
        "push %rbx\n push %r12\n push %r13\n push %r14\n push %r15\n \
         mov %rdi,%rbx\n mov %esi,%r15d\n mov %edx,%r13d\n mov %rcx,%rsi\n mov %r8,%rax\n \
         xor %r9d,%r9d\n vbroadcastss %xmm0,%xmm1\n"
    };
}

/// The same for the unrolled loop, whose registers differ.
#[cfg(target_arch = "x86_64")]
macro_rules! guest_unrolled_prologue {
    () => {
        "push %rbx\n push %r12\n push %r13\n push %r14\n push %r15\n \
         mov %rdi,%rbx\n mov %esi,%r15d\n mov %edx,%r13d\n mov %rcx,%r9\n mov %r8,%rax\n \
         xor %edi,%edi\n vbroadcastss %xmm0,%xmm1\n"
    };
}

#[cfg(target_arch = "x86_64")]
macro_rules! epilogue {
    () => {
        "pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbx\n ret\n"
    };
}

// Each function computes C[i][*] += x * B[p][*] for one row pair, n floats,
// from `(heap, c_row, b_row, n, x, page)`; it writes only the row of C and
// registers it saves or the System V ABI lets it clobber. Loops start on a
// 64-byte line, as Cranelift places loop headers.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    // The unrolled loop; its `je` (rel32, as Cranelift encodes it) leaves
    // for the epilogue.
    ".p2align 6",
    "cyxla_bench_matmul_unrolled:",
    guest_unrolled_prologue!(),
    ".p2align 6",
    concat!(
        ".byte ",
        guest_unrolled_check_bytes!(),
        ",",
        guest_first_copy_bytes!()
    ),
    ".byte 0x0f,0x84",
    ".long 3f - . - 4",
    concat!(
        ".byte ",
        guest_second_copy_bytes!(),
        ",",
        guest_unrolled_jump_back_bytes!()
    ),
    "3:",
    epilogue!(),
    // The same without its check: the copies and a jump back.
    ".p2align 6",
    "cyxla_bench_matmul_unrolled_no_check:",
    guest_unrolled_prologue!(),
    ".p2align 6",
    "2:",
    concat!(".byte ", guest_first_copy_bytes!()),
    ".byte 0x0f,0x84",
    ".long 3f - . - 4",
    concat!(".byte ", guest_second_copy_bytes!()),
    "jne 2b",
    "3:",
    epilogue!(),
    // The rolled loop, as emitted before the unrolling.
    ".p2align 6",
    "cyxla_bench_matmul_emitted:",
    guest_prologue!(),
    ".p2align 6",
    concat!(
        ".byte ",
        guest_check_bytes!(),
        ",",
        guest_trip_bytes!(),
        ",",
        guest_jump_back_bytes!()
    ),
    epilogue!(),
    // Without the check: the trip and a jump back to it.
    ".p2align 6",
    "cyxla_bench_matmul_no_check:",
    guest_prologue!(),
    ".p2align 6",
    "2:",
    concat!(".byte ", guest_trip_bytes!()),
    "jne 2b",
    epilogue!(),
    // C's row addressed from one register, `r11`.
    ".p2align 6",
    "cyxla_bench_matmul_one_register:",
    guest_prologue!(),
    ".p2align 6",
    "2:",
    "movzbq (%rax),%rdi",
    "lea (%r9,%r15,1),%r14d",
    "lea (%rbx,%r14,1),%r11",
    "vmovdqu (%r11),%xmm2",
    "lea (%r9,%r13,1),%edi",
    "lea (%rbx,%rdi,1),%r12",
    "vmulps (%r12),%xmm1,%xmm3",
    "vaddps %xmm3,%xmm2,%xmm2",
    "vmovups %xmm2,(%r11)",
    "vmovdqu 0x30(%r11),%xmm2",
    "vmulps 0x30(%r12),%xmm1,%xmm3",
    "vaddps %xmm3,%xmm2,%xmm2",
    "vmovups %xmm2,0x30(%r11)",
    "vmovdqu 0x20(%r11),%xmm2",
    "vmulps 0x20(%r12),%xmm1,%xmm3",
    "vaddps %xmm3,%xmm2,%xmm2",
    "vmovups %xmm2,0x20(%r11)",
    "vmovdqu 0x10(%r11),%xmm2",
    "vmulps 0x10(%r12),%xmm1,%xmm3",
    "vaddps %xmm3,%xmm2,%xmm2",
    "vmovups %xmm2,0x10(%r11)",
    "add $0x40,%r9d",
    "sub $0x10,%rsi",
    "jne 2b",
    epilogue!(),
    // Two trips a check: the body twice, leaving between them at the end.
    ".p2align 6",
    "cyxla_bench_matmul_two_trips:",
    guest_prologue!(),
    ".p2align 6",
    "2:",
    concat!(".byte ", guest_check_bytes!()),
    concat!(".byte ", guest_trip_bytes!()),
    "je 3f",
    concat!(".byte ", guest_trip_bytes!()),
    "jne 2b",
    "3:",
    epilogue!(),
    // The check's load once every 8 trips, counted in a register.
    ".p2align 6",
    "cyxla_bench_matmul_counted:",
    guest_prologue!(),
    "mov $1,%r10d",
    ".p2align 6",
    "2:",
    "sub $1,%r10d",
    "jne 3f",
    concat!(".byte ", guest_check_bytes!()),
    "mov $8,%r10d",
    "3:",
    concat!(".byte ", guest_trip_bytes!()),
    "jne 2b",
    epilogue!(),
    // Native: SSE throughout, as the native build (no VEX).
    ".p2align 6",
    "cyxla_bench_matmul_native:",
    "push %rbx\n push %r12\n push %r13\n push %r14\n push %r15",
    "lea 0x10(%rdi,%rdx,1),%r12",
    "mov %esi,%esi",
    "lea 0x10(%rdi,%rsi,1),%r8",
    "mov %rcx,%rbx",
    "xor %esi,%esi",
    "movaps %xmm0,%xmm1",
    "shufps $0,%xmm1,%xmm1",
    ".p2align 6",
    concat!(".byte ", native_loop_bytes!()),
    epilogue!(),
    options(att_syntax)
);

/// One copy: `C[c_row..][..n] += x * B[b_row..][..n]`, rows at byte offsets
/// into `heap`.
#[cfg(target_arch = "x86_64")]
type RowFn = unsafe extern "sysv64" fn(*mut u8, u32, u32, u64, f32, *const u8);

#[cfg(target_arch = "x86_64")]
unsafe extern "sysv64" {
    fn cyxla_bench_matmul_unrolled(heap: *mut u8, c: u32, b: u32, n: u64, x: f32, page: *const u8);
    fn cyxla_bench_matmul_unrolled_no_check(
        heap: *mut u8,
        c: u32,
        b: u32,
        n: u64,
        x: f32,
        page: *const u8,
    );
    fn cyxla_bench_matmul_emitted(heap: *mut u8, c: u32, b: u32, n: u64, x: f32, page: *const u8);
    fn cyxla_bench_matmul_no_check(heap: *mut u8, c: u32, b: u32, n: u64, x: f32, page: *const u8);
    fn cyxla_bench_matmul_one_register(
        heap: *mut u8,
        c: u32,
        b: u32,
        n: u64,
        x: f32,
        page: *const u8,
    );
    fn cyxla_bench_matmul_two_trips(heap: *mut u8, c: u32, b: u32, n: u64, x: f32, page: *const u8);
    fn cyxla_bench_matmul_counted(heap: *mut u8, c: u32, b: u32, n: u64, x: f32, page: *const u8);
    fn cyxla_bench_matmul_native(heap: *mut u8, c: u32, b: u32, n: u64, x: f32, page: *const u8);
}

/// The copies, the reference (native) first.
#[cfg(target_arch = "x86_64")]
fn shapes() -> [(&'static str, RowFn); 8] {
    [
        ("native (clang -O3, emitted)", cyxla_bench_matmul_native),
        ("guest, as emitted", cyxla_bench_matmul_unrolled),
        (
            "guest, as emitted, without its check",
            cyxla_bench_matmul_unrolled_no_check,
        ),
        (
            "guest, rolled (before patch 06)",
            cyxla_bench_matmul_emitted,
        ),
        ("rolled, without its check", cyxla_bench_matmul_no_check),
        (
            "rolled, C from one register",
            cyxla_bench_matmul_one_register,
        ),
        (
            "rolled, one check per 2 trips",
            cyxla_bench_matmul_two_trips,
        ),
        (
            "rolled, a load per 8 trips, counted",
            cyxla_bench_matmul_counted,
        ),
    ]
}

/// Checks that the guest's module (`guest`, the matmul guest compiled as
/// the sandbox compiles it) and the native build (`native`, its shared
/// library) still hold the loops copied here.
///
/// # Panics
///
/// If either loop is not found, with what to update. (On a CPU without
/// AVX the engine emits other code, which the copies here, VEX-encoded,
/// could not run: nothing is checked there, and [`report`] says so.)
#[cfg(target_arch = "x86_64")]
pub fn check_emitted(guest: &[u8], native: &[u8]) {
    if !std::arch::is_x86_feature_detected!("avx") {
        return;
    }
    // The unrolled loop in two pieces, around the `je` out's displacement.
    let before = crate::loop_shapes::bytes(concat!(
        guest_unrolled_check_bytes!(),
        ",",
        guest_first_copy_bytes!(),
        ",0x0f,0x84"
    ));
    let after = crate::loop_shapes::bytes(concat!(
        guest_second_copy_bytes!(),
        ",",
        guest_unrolled_jump_back_bytes!()
    ));
    let guest_found = guest
        .windows(before.len() + 4 + after.len())
        .any(|w| w.starts_with(&before) && w.ends_with(&after));
    let native_loop = crate::loop_shapes::bytes(native_loop_bytes!());
    let native_found = native.windows(native_loop.len()).any(|w| w == native_loop);
    for (what, code, found) in [
        ("guest", guest, guest_found),
        ("native", native, native_found),
    ] {
        if !found {
            let file = std::env::temp_dir().join(format!("cyxla-matmul-{what}.elf"));
            let wrote = std::fs::write(&file, code);
            panic!(
                "the {what} matmul loop is no longer the code its compiler emits: update \
                 benches/src/matmul_loops.rs from the disassembly (`objdump -d {}`, \
                 or `scripts/mca.sh`, which prints both loops{})",
                file.display(),
                wrote.err().map_or(String::new(), |e| format!(
                    "; the file could not be written: {e}"
                ))
            );
        }
    }
}

/// A readable page for the checks (never protected: the copies measure the
/// check's cost, not its trap).
#[cfg(target_arch = "x86_64")]
#[repr(align(4096))]
struct Page([u8; 4096]);
#[cfg(target_arch = "x86_64")]
static PAGE: Page = Page([0; 4096]);

/// Byte offsets of A, B and C in the heap, as a guest's allocations would
/// place them (rows on 64-byte lines, each matrix on pages of its own),
/// and the heap's size.
#[cfg(target_arch = "x86_64")]
const A_AT: usize = 0x1_0000;
#[cfg(target_arch = "x86_64")]
const B_AT: usize = 0x6_0000;
#[cfg(target_arch = "x86_64")]
const C_AT: usize = 0xA_0000;
#[cfg(target_arch = "x86_64")]
const HEAP: usize = 0x10_0000;

/// Times every copy, `rounds` interleaved rounds of the whole product, and
/// prints the table. Returns nothing to report: the figures explain the
/// bench's P3 row.
///
/// # Panics
///
/// If a copy computes another product than the scalar one.
#[cfg(target_arch = "x86_64")]
pub fn report(rounds: usize) {
    use std::hint::black_box;
    use std::time::Instant;

    if !std::arch::is_x86_feature_detected!("avx") {
        println!(
            "\nthe matmul's inner loop, native copies: not measured, this CPU has no AVX \
             (the copies are the code the engine emits with it)"
        );
        return;
    }

    // The heap starts on a 4 KiB boundary, as a linear memory does.
    let mut memory = vec![0f32; (HEAP + 4096) / 4];
    let skip = memory.as_ptr().align_offset(4096);
    let heap = &mut memory[skip..skip + HEAP / 4];
    let (a, b, c) = (A_AT / 4, B_AT / 4, C_AT / 4);
    let value = |k: usize| ((k * 7 + 3) % 29) as f32 * 0.125 - 1.5;
    for k in 0..N * N {
        heap[a + k] = value(k);
        heap[b + k] = value(k + 11);
    }
    // The scalar product, in the loops' order: c[i][j] += a[i][p] * b[p][j].
    let mut want = vec![0f32; N * N];
    for i in 0..N {
        for p in 0..N {
            let x = heap[a + i * N + p];
            for j in 0..N {
                want[i * N + j] += x * heap[b + p * N + j];
            }
        }
    }
    let xs: Vec<f32> = heap[a..a + N * N].to_vec();
    let shapes = shapes();
    let mut samples = vec![Vec::with_capacity(rounds); shapes.len()];
    for round in 0..rounds {
        for k in 0..shapes.len() {
            // Rotate the order so that no copy always follows another.
            let s = (k + round) % shapes.len();
            let (name, f) = shapes[s];
            heap[c..c + N * N].fill(0.0);
            let base = heap.as_mut_ptr().cast::<u8>();
            let start = Instant::now();
            for i in 0..N {
                for p in 0..N {
                    let c_row = (C_AT + 4 * N * i) as u32;
                    let b_row = (B_AT + 4 * N * p) as u32;
                    // SAFETY: each copy reads `N` floats of B's row `p` and
                    // reads and writes `N` of C's row `i`, all inside the
                    // heap (C_AT + 4·N·N <= HEAP, which `heap` spans), and
                    // the byte at `PAGE` (live for the program); it
                    // restores the registers it saves (see the assembly
                    // above).
                    unsafe {
                        f(
                            black_box(base),
                            c_row,
                            b_row,
                            N as u64,
                            xs[i * N + p],
                            PAGE.0.as_ptr(),
                        )
                    };
                }
            }
            samples[s].push(start.elapsed().as_secs_f64() * 1e3);
            let got = &heap[c..c + N * N];
            if let Some(k) = (0..N * N).find(|&k| got[k].to_bits() != want[k].to_bits()) {
                panic!(
                    "matmul loop `{name}`: C[{}][{}] is {}, the scalar product {}",
                    k / N,
                    k % N,
                    got[k],
                    want[k]
                );
            }
        }
    }
    let medians: Vec<f64> = samples
        .iter_mut()
        .map(|v| crate::report::median(v))
        .collect();
    println!(
        "\nthe matmul's inner loop, native copies under one driver ({N}x{N}, median of {rounds} \
         interleaved rounds; benches/src/matmul_loops.rs):"
    );
    for ((name, _), ms) in shapes.iter().zip(&medians) {
        println!(
            "  {name:<36} {ms:>8.3} ms  {:.3}x native's loop",
            ms / medians[0]
        );
    }
}

/// The copies are x86-64 code: nothing to compare elsewhere.
#[cfg(not(target_arch = "x86_64"))]
pub fn check_emitted(_guest: &[u8], _native: &[u8]) {}

/// Prints why nothing is measured on other architectures.
#[cfg(not(target_arch = "x86_64"))]
pub fn report(_rounds: usize) {
    println!("\nthe matmul's inner loop, native copies: x86-64 only, not measured here");
}
