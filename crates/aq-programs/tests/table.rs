//! The table as the rules see it.

use aq_programs::{Does, Takes, Via, all, lookup};

#[test]
fn lookup_finds_names_aliases_and_versioned_names() {
    assert_eq!(lookup("less").unwrap().name, "less");
    assert_eq!(lookup("more").unwrap().name, "less");
    assert_eq!(lookup("/usr/bin/rsync").unwrap().name, "rsync");
    assert_eq!(lookup("python3.12").unwrap().name, "python3");
    assert!(lookup("no-such-program-here").is_none());
}

#[test]
fn option_values_are_found_in_every_spelling() {
    let rsync = lookup("rsync").unwrap();
    let cap = rsync
        .caps(Does::Exec)
        .find(|c| c.via == Via::Option && c.takes == Takes::Command)
        .unwrap();
    let argv = ["-e", "sh -c id", "--rsh=ssh -p 2", "-essh", "src", "dst"];
    assert_eq!(cap.option_value(&argv, 0), Some("sh -c id"));
    assert_eq!(cap.option_value(&argv, 2), Some("ssh -p 2"));
    assert_eq!(cap.option_value(&argv, 3), Some("ssh"));
    assert_eq!(cap.option_value(&argv, 4), None);
}

#[test]
fn the_table_is_sorted_and_every_entry_says_something() {
    let names: Vec<&str> = all().iter().map(|p| p.name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    for p in all() {
        assert!(!p.caps.is_empty(), "{}", p.name);
    }
}
