//! The catalogues agree with each other: every language has every file and message English has,
//! each with the same variables and attributes; and the files built in are the files on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fluent_syntax::ast;
use fluent_syntax::parser;

mod common;
use common::pattern_variables;

/// A message's or term's shape: its variables, and its attributes with theirs.
type Shape = (BTreeSet<String>, BTreeMap<String, BTreeSet<String>>);

fn locales() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("locales")
}

/// Every entry of a catalogue's text, by id (terms with their leading `-`).
fn shapes(language: &str, name: &str, text: &str) -> BTreeMap<String, Shape> {
    let resource = parser::parse(text)
        .unwrap_or_else(|(_, errors)| panic!("{language}/{name} does not parse: {errors:?}"));
    let mut out = BTreeMap::new();
    for entry in resource.body {
        let (id, value, attributes) = match entry {
            ast::Entry::Message(m) => (m.id.name.to_owned(), m.value, m.attributes),
            ast::Entry::Term(t) => (format!("-{}", t.id.name), Some(t.value), t.attributes),
            _ => continue,
        };
        let mut variables = BTreeSet::new();
        if let Some(value) = &value {
            pattern_variables(value, &mut variables);
        }
        let attributes = attributes
            .iter()
            .map(|a| {
                let mut vars = BTreeSet::new();
                pattern_variables(&a.value, &mut vars);
                (a.id.name.to_owned(), vars)
            })
            .collect();
        let previous = out.insert(id.clone(), (variables, attributes));
        assert!(previous.is_none(), "{language}/{name} repeats {id}");
    }
    out
}

/// Every entry of a language's catalogue, by file.
fn catalogue(language: &str) -> BTreeMap<&'static str, BTreeMap<String, Shape>> {
    askdesk_i18n::files(language)
        .expect("a built-in language")
        .iter()
        .map(|(name, text)| (*name, shapes(language, name, text)))
        .collect()
}

#[test]
fn every_language_has_every_message_with_the_same_variables() {
    let english = catalogue(askdesk_i18n::DEFAULT);
    for language in askdesk_i18n::languages() {
        let other = catalogue(language);
        assert_eq!(
            other.keys().collect::<Vec<_>>(),
            english.keys().collect::<Vec<_>>(),
            "{language} has other files than English"
        );
        for (file, messages) in &english {
            let theirs = &other[file];
            for (id, shape) in messages {
                let Some(their_shape) = theirs.get(id) else {
                    panic!("{language}/{file} lacks {id}");
                };
                assert_eq!(
                    their_shape, shape,
                    "{language}/{file} {id}: other variables or attributes than English"
                );
            }
            for id in theirs.keys() {
                assert!(
                    messages.contains_key(id),
                    "{language}/{file} has {id}, which English has not"
                );
            }
        }
    }
}

#[test]
fn no_two_files_of_a_language_name_the_same_message() {
    for language in askdesk_i18n::languages() {
        let mut seen = BTreeMap::new();
        for (file, messages) in catalogue(language) {
            for id in messages.into_keys() {
                if let Some(other) = seen.insert(id.clone(), file) {
                    panic!("{language}: {id} is in {other} and in {file}");
                }
            }
        }
    }
}

#[test]
fn the_catalogues_built_in_are_the_files_on_disk() {
    let mut on_disk = BTreeMap::new();
    for language in std::fs::read_dir(locales()).unwrap() {
        let language = language.unwrap();
        let mut files = BTreeMap::new();
        for file in std::fs::read_dir(language.path()).unwrap() {
            let file = file.unwrap().path();
            files.insert(
                file.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&file).unwrap(),
            );
        }
        on_disk.insert(language.file_name().to_string_lossy().into_owned(), files);
    }
    let built_in: BTreeMap<String, BTreeMap<String, String>> = askdesk_i18n::CATALOGUES
        .iter()
        .map(|(language, files)| {
            let files = files
                .iter()
                .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
                .collect();
            ((*language).to_owned(), files)
        })
        .collect();
    assert_eq!(built_in, on_disk);
}
