//! Errors of the TOML files cyxla reads (configuration, policy), located:
//! `FILE at line L, column C (`the line`): what`.

use std::path::Path;

/// A TOML error as `FILE at line L, column C (`the line`): what`.
pub fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> String {
    let at = e
        .span()
        .map(|span| {
            let (line, column) = line_column(text, span.start);
            let source = text.lines().nth(line - 1).unwrap_or("").trim();
            format!(" at line {line}, column {column} (`{source}`)")
        })
        .unwrap_or_default();
    format!("{}{at}: {}", path.display(), e.message())
}

/// 1-based line and column of byte offset `at` in `text`.
pub fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
