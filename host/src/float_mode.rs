//! The floating-point mode guest code runs in: wasm's, whatever the calling
//! thread's.
//!
//! WebAssembly specifies IEEE 754 arithmetic with round-to-nearest and
//! subnormals kept, and the code Cranelift compiles for a guest uses the
//! CPU's scalar and vector float instructions, which follow the calling
//! thread's float control register. XLA's CPU threads run with MXCSR's
//! flush-to-zero (FTZ, bit 15) and denormals-are-zero (DAZ, bit 6) set, for
//! XLA's own kernels; a guest called from them would turn every subnormal
//! result and operand into 0, and give other values than the same call in
//! `cyxla-host replay`, in tests, in another wasm engine or in wasm's
//! specification. [`WasmFloatMode`] puts the default mode in place for the
//! whole of a guest call and gives the caller its own mode back after it,
//! however the call ends (returned, trapped, hit its deadline, unwound), so
//! that a guest's result does not depend on the thread it ran on. Native
//! handlers are not guest code and keep the mode of XLA's thread.
//!
//! Cost, when the thread's mode is the default already: one `stmxcsr` and
//! a compare per call; when it is not: one `stmxcsr` and two `ldmxcsr`
//! more (`docs/abi.md`, "Floating point").

/// While alive, this thread's float control register holds wasm's mode
/// (x86_64: MXCSR's control bits 0x1F80: every exception masked, round to
/// nearest, no FTZ, no DAZ; aarch64: FPCR 0: round to nearest, no flush to
/// zero (FZ, FZ16), no default NaN, no exception traps); on drop, the mode
/// the thread had before. Nested guards (a guest call inside a host
/// function called by a guest) find the default mode and change nothing.
/// Elsewhere it does nothing.
#[must_use = "the mode holds only while the guard lives"]
pub(crate) struct WasmFloatMode {
    /// The caller's register, when the guard changed it.
    caller: Option<Word>,
}

impl WasmFloatMode {
    /// Puts wasm's float mode in place on this thread until the guard is
    /// dropped.
    #[inline]
    pub(crate) fn enter() -> WasmFloatMode {
        let current = arch::read();
        if current & arch::CONTROL == arch::DEFAULT {
            return WasmFloatMode { caller: None };
        }
        arch::write(arch::DEFAULT | (current & !arch::CONTROL));
        WasmFloatMode {
            caller: Some(current),
        }
    }
}

impl Drop for WasmFloatMode {
    #[inline]
    fn drop(&mut self) {
        if let Some(caller) = self.caller {
            // The caller's control bits; the status bits as they are now
            // (the caller's, which were carried in, and what the guest
            // raised), as when the guard changes nothing.
            arch::write((caller & arch::CONTROL) | (arch::read() & !arch::CONTROL));
        }
    }
}

/// The float control register's contents.
#[cfg(target_arch = "x86_64")]
type Word = u32;
/// The float control register's contents.
#[cfg(target_arch = "aarch64")]
type Word = u64;
/// The float control register's contents (no register on this target).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
type Word = u32;

#[cfg(target_arch = "x86_64")]
mod arch {
    use super::Word;

    /// MXCSR's control bits (6..=15: DAZ, the exception masks, rounding
    /// control, FTZ). Bits 0..=5 are sticky status flags, not part of the
    /// mode: any inexact operation sets one, and the guard neither looks at
    /// nor drops them. Bits 16..=31 are reserved and always 0.
    pub(super) const CONTROL: Word = 0xFFC0;
    /// Wasm's mode, which is also the x86_64 ABI's initial MXCSR: every
    /// exception masked (bits 7..=12), round to nearest (bits 13..=14 = 0),
    /// FTZ (bit 15) and DAZ (bit 6) off.
    pub(super) const DEFAULT: Word = 0x1F80;

    /// This thread's MXCSR.
    #[inline]
    pub(super) fn read() -> Word {
        let mut csr: Word = 0;
        // SAFETY: `stmxcsr` stores the 4-byte MXCSR at the address given,
        // here `csr`, a live, aligned local this block may write; it changes
        // no register nor flag and cannot fault (SSE is part of x86_64).
        unsafe {
            core::arch::asm!(
                "stmxcsr [{csr}]",
                csr = in(reg) &raw mut csr,
                options(nostack, preserves_flags),
            );
        }
        csr
    }

    /// Sets this thread's MXCSR to `csr`.
    #[inline]
    pub(super) fn write(csr: Word) {
        // SAFETY: `ldmxcsr` loads MXCSR from the address given, here `csr`,
        // a live, aligned local this block only reads. It faults only if a
        // reserved bit (16..=31) is set: every value written is made of bits
        // read from MXCSR itself or of `DEFAULT`, so none is. The value is
        // either wasm's mode, which is also the mode Rust code assumes and
        // the ABI's initial one, or the mode this thread's code ran in
        // before the guard changed it: no code runs in a mode it did not
        // run in before.
        unsafe {
            core::arch::asm!(
                "ldmxcsr [{csr}]",
                csr = in(reg) &raw const csr,
                options(nostack, preserves_flags, readonly),
            );
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    use super::Word;

    /// FPCR holds only control bits (the status flags are in FPSR): all of
    /// it is the mode. Besides FZ (bit 24) and FZ16 (bit 19) that is the
    /// rounding mode (bits 22..=23), default NaN (bit 25), the exception
    /// trap enables and, on newer cores, the alternate float behaviours
    /// (FIZ, AH, NEP): 0 in wasm's mode for every one.
    pub(super) const CONTROL: Word = Word::MAX;
    /// Wasm's mode, which is also the Linux ABI's initial FPCR: round to
    /// nearest, no flush to zero, IEEE NaNs, no traps.
    pub(super) const DEFAULT: Word = 0;

    /// This thread's FPCR.
    #[inline]
    pub(super) fn read() -> Word {
        let fpcr: Word;
        // SAFETY: `mrs` reads FPCR, which user code (EL0) may read, into a
        // register; it touches no memory and no other register.
        unsafe {
            core::arch::asm!(
                "mrs {fpcr}, fpcr",
                fpcr = out(reg) fpcr,
                options(nomem, nostack, preserves_flags),
            );
        }
        fpcr
    }

    /// Sets this thread's FPCR to `fpcr`.
    #[inline]
    pub(super) fn write(fpcr: Word) {
        // SAFETY: `msr` writes FPCR, which user code (EL0) may write; every
        // value written is 0 (`DEFAULT`) or one read from FPCR itself, so no
        // reserved bit is set. The value is either wasm's mode, which is
        // also the mode Rust code assumes and the ABI's initial one, or the
        // mode this thread's code ran in before the guard changed it: no
        // code runs in a mode it did not run in before.
        unsafe {
            core::arch::asm!(
                "msr fpcr, {fpcr}",
                fpcr = in(reg) fpcr,
                options(nomem, nostack, preserves_flags),
            );
        }
    }
}

/// No float control register to manage: the guard does nothing.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod arch {
    use super::Word;

    /// Nothing is compared.
    pub(super) const CONTROL: Word = 0;
    /// Nothing is set.
    pub(super) const DEFAULT: Word = 0;

    /// Always 0.
    #[inline]
    pub(super) fn read() -> Word {
        0
    }

    /// Never called (`read() & CONTROL == DEFAULT` always holds).
    #[inline]
    pub(super) fn write(_: Word) {}
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;

    /// The flush-to-zero bits a thread that wants fast float code sets:
    /// MXCSR's FTZ and DAZ.
    #[cfg(target_arch = "x86_64")]
    const FLUSH: Word = 0x8040;
    /// The flush-to-zero bits a thread that wants fast float code sets:
    /// FPCR's FZ (bit 24) and FZ16 (bit 19).
    #[cfg(target_arch = "aarch64")]
    const FLUSH: Word = (1 << 24) | (1 << 19);

    #[test]
    fn sets_the_default_mode_and_restores_the_callers() {
        std::thread::spawn(|| {
            let control = || arch::read() & arch::CONTROL;
            let before = arch::read();
            assert_eq!(before & arch::CONTROL, arch::DEFAULT);
            {
                let mode = WasmFloatMode::enter();
                assert!(mode.caller.is_none(), "the default mode changes nothing");
                assert_eq!(control(), arch::DEFAULT, "unchanged");
            }
            assert_eq!(control(), arch::DEFAULT);

            arch::write(before | FLUSH);
            assert_eq!(
                control(),
                arch::DEFAULT | FLUSH,
                "the register holds the bits"
            );
            {
                let _mode = WasmFloatMode::enter();
                assert_eq!(control(), arch::DEFAULT, "reset");
                {
                    let nested = WasmFloatMode::enter();
                    assert!(nested.caller.is_none(), "a nested guard changes nothing");
                }
                assert_eq!(control(), arch::DEFAULT);
            }
            let after = control();
            arch::write(before);
            assert_eq!(after, arch::DEFAULT | FLUSH, "restored");
        })
        .join()
        .unwrap();
    }
}
