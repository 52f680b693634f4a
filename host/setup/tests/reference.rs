//! docs/reference-settings.md holds the settings table as the code defines
//! it, and the configuration table of docs/using-jax.md and
//! docs/jupyterhub.md agree with it.

use std::path::PathBuf;

use cyxla_setup::config::SETTINGS;
use cyxla_setup::settings::reference_table;

fn doc(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_reference_lists_every_setting_as_the_table_defines_it() {
    let text = doc("docs/reference-settings.md");
    // Every row's spellings, on its row of the doc.
    for s in SETTINGS {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", s.name)))
            .unwrap_or_else(|| panic!("docs/reference-settings.md has no row `{}`", s.name));
        let spellings = s
            .env
            .into_iter()
            .map(str::to_owned)
            .chain(s.flags.iter().map(|f| f.usage()))
            .chain(s.file.map(str::to_owned))
            .chain(s.tenant.map(str::to_owned));
        for spelling in spellings {
            assert!(
                row.contains(&format!("`{spelling}`")),
                "docs/reference-settings.md, row `{}`: `{spelling}` is missing",
                s.name
            );
        }
    }
    let table = reference_table(SETTINGS);
    assert!(
        text.contains(&table),
        "docs/reference-settings.md's table differs from the code's; it should read:\n\n{table}"
    );
}

#[test]
fn the_configuration_table_of_the_jax_guide_agrees() {
    let path = "docs/using-jax.md";
    let text = doc(path);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| `CYXLA_"))
        .collect();
    assert!(!rows.is_empty(), "{path} has no configuration table");
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let var = cells[1].trim_matches('`');
        let setting = SETTINGS
            .iter()
            .find(|s| s.env == Some(var))
            .unwrap_or_else(|| panic!("{path} names {var}, which is no setting"));
        let key = cells[2].trim_matches('`').trim_matches(['[', ']']);
        assert_eq!(
            (!key.is_empty()).then_some(key),
            setting.file,
            "{path}: the file key of {var}"
        );
    }
    assert!(
        text.contains("(reference-settings.md)"),
        "{path} does not point to docs/reference-settings.md"
    );
}

#[test]
fn every_variable_the_hub_guide_names_is_a_setting() {
    let path = "docs/jupyterhub.md";
    let text = doc(path);
    for (i, _) in text.match_indices("CYXLA_") {
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
            .collect();
        assert!(
            SETTINGS.iter().any(|s| s.env == Some(name.as_str())),
            "{path} names {name}, which is no setting"
        );
    }
}
