//! How guest code past its deadline is stopped (`--limit interrupt=NAME`).

use serde::Deserialize;
use serde::de::{self, Deserializer};

/// How guest code past its deadline is stopped. Its settings are `auto` and
/// `poll`; `signal` is refused with [`SIGNAL_REMOVED`], `epoch` with
/// [`EPOCH_REPLACED`]. The benches (the
/// `bench` feature) also have `Unchecked`, which no setting names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Interrupt {
    /// Poll pages (the default).
    #[default]
    Auto,
    /// A check at every function entry and loop header that loads a byte
    /// from the store's poll page, which the host protects when the call's
    /// deadline passes (compiled by the patched Cranelift integration, see
    /// `vendor/wasmtime-internal-cranelift/CYXLA-PATCH.md`).
    Poll,
    /// No deadline at all: a looping guest never returns. For measuring
    /// what deadlines cost (the `bench` feature); never for guests one does
    /// not trust.
    #[cfg(any(test, feature = "bench", feature = "fuzzing"))]
    Unchecked,
}

/// Why `interrupt = "signal"` is refused: the mechanism was removed.
pub const SIGNAL_REMOVED: &str = "interrupt `signal` was removed: it stopped a guest late or never when the calling thread blocked real-time signals or another library replaced its signal handler, and it rewrote return addresses that profilers and other unwinders walk; deadlines are poll-page checks (`interrupt=poll`, the default): remove the setting";

/// Why `interrupt = "epoch"` is refused: poll pages replaced epoch checks.
pub const EPOCH_REPLACED: &str = "interrupt `epoch` was replaced by `poll`: each check in guest code is now one load from a page the host protects at the deadline instead of a load, a compare and a branch, with the same guarantee; remove the setting (`auto` is `poll`) or write `poll`";

impl<'de> Deserialize<'de> for Interrupt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Interrupt, D::Error> {
        const NAMES: &[&str] = &["auto", "poll"];
        let name = String::deserialize(d)?;
        match name.as_str() {
            "auto" => Ok(Interrupt::Auto),
            "poll" => Ok(Interrupt::Poll),
            "epoch" => Err(de::Error::custom(EPOCH_REPLACED)),
            "signal" => Err(de::Error::custom(SIGNAL_REMOVED)),
            other => Err(de::Error::unknown_variant(other, NAMES)),
        }
    }
}

impl Interrupt {
    /// Its name, as `--limit interrupt=NAME` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Interrupt::Auto => "auto",
            Interrupt::Poll => "poll",
            #[cfg(any(test, feature = "bench", feature = "fuzzing"))]
            Interrupt::Unchecked => "unchecked",
        }
    }

    /// Whether guest code is compiled with deadline checks (always, but for
    /// the benches' `Unchecked`).
    pub fn checked(self) -> bool {
        #[cfg(any(test, feature = "bench", feature = "fuzzing"))]
        if self == Interrupt::Unchecked {
            return false;
        }
        true
    }
}
