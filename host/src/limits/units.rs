//! The units limits are written in: sizes, times, counts, yes/no.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// A size in bytes: a number of bytes, or text like `64 MiB`, `512KiB`,
/// `1GiB`, `4096`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ByteSize(pub u64);

/// A wall time: text like `250ms`, `2s`, `1min`, `500us`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Time(pub Duration);

/// A yes/no setting: `true` or `false` (also as text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Flag(pub bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true or false")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Flag, E> {
                Ok(Flag(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Flag, E> {
                match v.trim() {
                    "true" => Ok(Flag(true)),
                    "false" => Ok(Flag(false)),
                    other => Err(E::custom(format!("`{other}` is not true or false"))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A count: a number, or its text (`100000`, `100_000`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Count(pub u64);

/// A decimal number read exactly: `digits / 10^scale`.
#[derive(Clone, Copy)]
struct Decimal {
    digits: u128,
    scale: u32,
}

impl Decimal {
    /// `self * factor`, rounded to the nearest whole number (`exact`: only
    /// if no rounding is needed); `None` if it does not fit.
    fn times(self, factor: u128, exact: bool) -> Option<u128> {
        let product = self.digits.checked_mul(factor)?;
        let divisor = 10u128.checked_pow(self.scale)?;
        let (whole, rest) = (product / divisor, product % divisor);
        if exact && rest != 0 {
            return None;
        }
        Some(whole + u128::from(rest * 2 >= divisor))
    }
}

/// Splits `12.5 MiB` into `12.5` and `"mib"` (digits may be grouped with `_`).
fn number_and_unit(text: &str) -> Option<(Decimal, String)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(text.len());
    let number: String = text[..end].chars().filter(|&c| c != '_').collect();
    let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return None;
    }
    let digits = format!("{whole}{fraction}").parse().ok()?;
    let scale = u32::try_from(fraction.len()).ok()?;
    let unit = text[end..].trim().to_ascii_lowercase();
    Some((Decimal { digits, scale }, unit))
}

/// Parses a size (see [`ByteSize`]).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let bad = || {
        format!("`{text}` is not a size (a number of bytes, or a number with B, KiB, MiB or GiB)")
    };
    let (value, unit) = number_and_unit(text).ok_or_else(bad)?;
    let scale: u128 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    let bytes = value.times(scale, true).ok_or_else(bad)?;
    u64::try_from(bytes).map_err(|_| bad())
}

/// Parses a wall time (see [`Time`]), to the nearest nanosecond.
pub fn parse_time(text: &str) -> Result<Duration, String> {
    let bad =
        || format!("`{text}` is not a time (a number with us, ms, s or min, e.g. 250ms or 2s)");
    let (value, unit) = number_and_unit(text).ok_or_else(bad)?;
    let nanos_per_unit: u128 = match unit.as_str() {
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        _ => return Err(bad()),
    };
    let nanos = value.times(nanos_per_unit, false).ok_or_else(bad)?;
    let seconds = u64::try_from(nanos / 1_000_000_000).map_err(|_| bad())?;
    let subsec = u32::try_from(nanos % 1_000_000_000).map_err(|_| bad())?;
    Ok(Duration::new(seconds, subsec))
}

/// Parses a count (see [`Count`]).
pub fn parse_count(text: &str) -> Result<u64, String> {
    let digits: String = text.trim().chars().filter(|&c| c != '_').collect();
    digits
        .parse()
        .map_err(|_| format!("`{text}` is not a count (a whole number)"))
}

struct Expecting<T> {
    what: &'static str,
    parse: fn(&str) -> Result<T, String>,
    from_int: Option<fn(u64) -> T>,
}

impl<'de, T> Visitor<'de> for Expecting<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        match self.from_int {
            Some(f) => Ok(f(v)),
            None => Err(E::custom(format!("{v} has no unit: write {}", self.what))),
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(E::custom(format!("{v} is negative"))),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Err(E::custom(format!("{v} is not {}", self.what)))
    }
}

/// `Deserialize` for each wrapper: a string in its syntax, or a bare number
/// where it takes one.
macro_rules! deserialize_with {
    ($($ty:ident: $what:expr, $parse:ident, $from_int:expr;)*) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                d.deserialize_any(Expecting {
                    what: $what,
                    parse: |s| $parse(s).map($ty),
                    from_int: $from_int,
                })
            }
        }
    )*};
}

deserialize_with! {
    ByteSize: "a size like \"64 MiB\" or a number of bytes", parse_bytes, Some(ByteSize);
    Time: "a time with a unit, like \"250ms\" or \"2s\"", parse_time, None;
    Count: "a whole number", parse_count, Some(Count);
}

/// `n` bytes as `N MiB`, `N KiB` or `N bytes`, whichever is exact.
pub fn bytes_display(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_shown_exactly() {
        assert_eq!(bytes_display(4 << 30), "4 GiB");
        assert_eq!(bytes_display(256 << 20), "256 MiB");
        assert_eq!(bytes_display(64 << 10), "64 KiB");
        assert_eq!(bytes_display(1000), "1000 bytes");
    }

    #[test]
    fn units_parse() {
        assert_eq!(parse_bytes("1.5 KiB"), Ok(1536));
        assert_eq!(parse_bytes("2g"), Ok(2 << 30));
        assert!(parse_bytes("1.3 B").is_err());
        assert!(parse_bytes("-1").is_err());
        assert_eq!(parse_time("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_time("1min"), Ok(Duration::from_secs(60)));
        assert!(parse_time("1e400s").is_err());
        // Exact, not through f64: 2^53 + 1 bytes, a tenth of a millisecond.
        assert_eq!(parse_bytes("9007199254740993"), Ok((1 << 53) + 1));
        assert_eq!(parse_bytes("0.5 KiB"), Ok(512));
        assert!(parse_bytes("0.1 KiB").is_err());
        assert!(parse_bytes("18446744073709551616").is_err());
        assert!(parse_bytes("1.2.3").is_err());
        assert!(parse_bytes(".").is_err());
        assert_eq!(parse_time("0.1ms"), Ok(Duration::from_micros(100)));
        assert_eq!(parse_time(".5s"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_time("1.5min"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_time("0.0000000004s"), Ok(Duration::ZERO));
        assert_eq!(parse_time("0.0000000006s"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_count("100_000"), Ok(100_000));
        assert!(parse_count("1.5").is_err());
    }
}
