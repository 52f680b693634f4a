//! The `cyxla.targets` custom section: name rules, records and the parser.

use core::fmt;

use super::{MAX_NAME_LEN, RECORD_PREFIX, TARGETS_SECTION};

/// Whether `name` may be used as a target or export name in a record:
/// 1 to [`MAX_NAME_LEN`] bytes of `[A-Za-z0-9_.$-]`.
pub const fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_NAME_LEN {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if !is_name_byte(bytes[i]) {
            return false;
        }
        i += 1;
    }
    true
}

const fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b'-')
}

/// One record of a [`TARGETS_SECTION`]: the target a guest serves and the
/// export that handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetRecord<'a> {
    /// The custom-call target name (`stablehlo.custom_call @<target>`).
    pub target: &'a str,
    /// The guest export with signature `(frame: i32) -> i32` that handles it.
    pub export: &'a str,
    /// Byte offset of the record in the section.
    pub offset: usize,
}

/// Why a [`TARGETS_SECTION`] could not be read. Offsets are byte offsets of
/// the offending record in the section.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetsError {
    /// A record does not start with [`RECORD_PREFIX`].
    BadPrefix {
        /// Offset of the record.
        offset: usize,
    },
    /// A record starts with `cyxla-target ` but names a version other than
    /// `v1`.
    UnsupportedVersion {
        /// Offset of the record.
        offset: usize,
    },
    /// The last record does not end with `\n`.
    MissingNewline {
        /// Offset of the record.
        offset: usize,
    },
    /// A record does not have exactly two space-separated fields after the
    /// prefix.
    BadFieldCount {
        /// Offset of the record.
        offset: usize,
    },
    /// A target or export name is empty, too long or has a character outside
    /// `[A-Za-z0-9_.$-]`.
    BadName {
        /// Offset of the record.
        offset: usize,
        /// `"target"` or `"export"`.
        field: &'static str,
    },
    /// The same target is listed twice with different exports.
    ConflictingExports {
        /// Offset of the second record.
        offset: usize,
        /// The target.
        target: alloc::string::String,
    },
}

impl TargetsError {
    /// Byte offset in the section of the record at fault.
    pub fn offset(&self) -> usize {
        match *self {
            TargetsError::BadPrefix { offset }
            | TargetsError::UnsupportedVersion { offset }
            | TargetsError::MissingNewline { offset }
            | TargetsError::BadFieldCount { offset }
            | TargetsError::BadName { offset, .. }
            | TargetsError::ConflictingExports { offset, .. } => offset,
        }
    }
}

impl fmt::Display for TargetsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let section = TARGETS_SECTION;
        match self {
            TargetsError::BadPrefix { offset } => write!(
                f,
                "custom section `{section}`: record at byte {offset} does not start with `{RECORD_PREFIX}`"
            ),
            TargetsError::UnsupportedVersion { offset } => write!(
                f,
                "custom section `{section}`: record at byte {offset} has an unsupported version (expected `{RECORD_PREFIX}`)"
            ),
            TargetsError::MissingNewline { offset } => write!(
                f,
                "custom section `{section}`: record at byte {offset} does not end with a newline"
            ),
            TargetsError::BadFieldCount { offset } => write!(
                f,
                "custom section `{section}`: record at byte {offset} is not `{RECORD_PREFIX}<target> <export>`"
            ),
            TargetsError::BadName { offset, field } => write!(
                f,
                "custom section `{section}`: record at byte {offset} has an invalid {field} name \
                 (expected 1 to {MAX_NAME_LEN} bytes of [A-Za-z0-9_.$-])"
            ),
            TargetsError::ConflictingExports { offset, target } => write!(
                f,
                "custom section `{section}`: record at byte {offset} lists target `{target}` again with a different export"
            ),
        }
    }
}

impl core::error::Error for TargetsError {}

/// Iterator over the records of a [`TARGETS_SECTION`], from
/// [`target_records`]. Yields each record in section order (duplicates
/// included); stops after the first error.
#[derive(Clone, Debug)]
pub struct TargetRecords<'a> {
    section: &'a [u8],
    pos: usize,
    failed: bool,
}

/// Reads the records of a [`TARGETS_SECTION`] lazily, without allocating.
/// NUL bytes between records are skipped. Does not check for conflicting
/// duplicates; [`parse_targets`] does.
pub fn target_records(section: &[u8]) -> TargetRecords<'_> {
    TargetRecords {
        section,
        pos: 0,
        failed: false,
    }
}

impl<'a> Iterator for TargetRecords<'a> {
    type Item = Result<TargetRecord<'a>, TargetsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        while self.pos < self.section.len() && self.section[self.pos] == 0 {
            self.pos += 1;
        }
        if self.pos >= self.section.len() {
            return None;
        }
        let offset = self.pos;
        let result = parse_record(self.section, offset);
        match &result {
            Ok((_, end)) => self.pos = *end,
            Err(_) => self.failed = true,
        }
        Some(result.map(|(record, _)| record))
    }
}

/// Parses the record at `offset`; returns it and the offset after its `\n`.
fn parse_record(section: &[u8], offset: usize) -> Result<(TargetRecord<'_>, usize), TargetsError> {
    let rest = &section[offset..];
    let Some(body) = rest.strip_prefix(RECORD_PREFIX.as_bytes()) else {
        return Err(if rest.starts_with(b"cyxla-target ") {
            TargetsError::UnsupportedVersion { offset }
        } else {
            TargetsError::BadPrefix { offset }
        });
    };
    // A record may not run into a NUL before its newline.
    let Some(nl) = body.iter().position(|&b| b == b'\n' || b == 0) else {
        return Err(TargetsError::MissingNewline { offset });
    };
    if body[nl] != b'\n' {
        return Err(TargetsError::MissingNewline { offset });
    }
    let line = &body[..nl];
    let mut fields = line.split(|&b| b == b' ');
    let (Some(target), Some(export), None) = (fields.next(), fields.next(), fields.next()) else {
        return Err(TargetsError::BadFieldCount { offset });
    };
    let target = checked_name(target).ok_or(TargetsError::BadName {
        offset,
        field: "target",
    })?;
    let export = checked_name(export).ok_or(TargetsError::BadName {
        offset,
        field: "export",
    })?;
    let end = offset + RECORD_PREFIX.len() + nl + 1;
    Ok((
        TargetRecord {
            target,
            export,
            offset,
        },
        end,
    ))
}

fn checked_name(bytes: &[u8]) -> Option<&str> {
    // Names are ASCII by construction, so from_utf8 cannot fail after the check.
    let name = core::str::from_utf8(bytes).ok()?;
    is_valid_name(name).then_some(name)
}

/// Parses a whole [`TARGETS_SECTION`] into `(target, export)` pairs in
/// section order. An exact duplicate record (same target and export, e.g.
/// from a header compiled into two objects) is kept once.
///
/// # Errors
///
/// The first malformed record ([`TargetsError`]; its offset names it), or a
/// target listed twice with different exports. An empty section (or one of
/// only NUL bytes) is not an error: it yields no targets.
///
/// # Examples
///
/// ```
/// use cyxla_guest_abi::parse_targets;
/// let section = b"cyxla-target v1 rms_norm rms_norm_handler\n\0cyxla-target v1 fail fail\n";
/// let targets = parse_targets(section).unwrap();
/// assert_eq!(targets, [("rms_norm", "rms_norm_handler"), ("fail", "fail")]);
/// ```
pub fn parse_targets(section: &[u8]) -> Result<alloc::vec::Vec<(&str, &str)>, TargetsError> {
    let mut out: alloc::vec::Vec<(&str, &str)> = alloc::vec::Vec::new();
    // Target -> its export: linear in the number of records (a module may
    // declare many).
    let mut seen: alloc::collections::BTreeMap<&str, &str> = alloc::collections::BTreeMap::new();
    for record in target_records(section) {
        let record = record?;
        match seen.get(record.target) {
            Some(e) if *e == record.export => {}
            Some(_) => {
                return Err(TargetsError::ConflictingExports {
                    offset: record.offset,
                    target: record.target.into(),
                });
            }
            None => {
                seen.insert(record.target, record.export);
                out.push((record.target, record.export));
            }
        }
    }
    Ok(out)
}
