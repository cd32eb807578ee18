use std::fs;
use std::io::Write;

use super::*;

fn journal_path(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("run.journal")
}

#[test]
fn a_new_journal_has_a_header_and_no_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    let opened = open(&path, "order-7").unwrap();
    assert_eq!(
        opened,
        Opened {
            records: vec![],
            torn: false
        }
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\"amlJournal\":1,\"workflow\":\"order-7\"}\n"
    );
}

#[test]
fn records_come_back_in_append_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    open(&path, "w").unwrap();
    append(&path, r#"{"key":"a","n":1}"#).unwrap();
    append(&path, r#"{"key":"b","n":2}"#).unwrap();
    let opened = open(&path, "w").unwrap();
    assert_eq!(
        opened.records,
        vec![r#"{"key":"a","n":1}"#, r#"{"key":"b","n":2}"#]
    );
    assert!(!opened.torn);
}

#[test]
fn a_torn_last_record_is_dropped_and_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    open(&path, "w").unwrap();
    append(&path, r#"{"key":"a"}"#).unwrap();
    let before = fs::metadata(&path).unwrap().len();
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"key":"b","va"#)
        .unwrap();
    let opened = open(&path, "w").unwrap();
    assert_eq!(opened.records, vec![r#"{"key":"a"}"#]);
    assert!(opened.torn);
    assert_eq!(fs::metadata(&path).unwrap().len(), before);
    // The next append lands on a clean line.
    append(&path, r#"{"key":"c"}"#).unwrap();
    assert_eq!(
        open(&path, "w").unwrap().records,
        vec![r#"{"key":"a"}"#, r#"{"key":"c"}"#]
    );
}

#[test]
fn another_workflows_journal_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    open(&path, "invoice-1").unwrap();
    let error = open(&path, "invoice-2").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "AML journal \"{}\" belongs to workflow \"invoice-1\", not \"invoice-2\"",
            path.display()
        )
    );
}

#[test]
fn a_file_that_is_not_a_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    fs::write(&path, "hello\nworld\n").unwrap();
    assert_eq!(
        open(&path, "w").unwrap_err(),
        JournalError::NotAJournal(path.display().to_string())
    );
    fs::write(&path, "not json at all").unwrap();
    assert_eq!(
        open(&path, "w").unwrap_err(),
        JournalError::NotAJournal(path.display().to_string())
    );
}

#[test]
fn a_torn_header_starts_the_journal_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    fs::write(&path, "{\"amlJour").unwrap();
    assert_eq!(open(&path, "w").unwrap().records, Vec::<String>::new());
    assert!(fs::read_to_string(&path)
        .unwrap()
        .ends_with("\"workflow\":\"w\"}\n"));
}

#[test]
fn a_corrupt_complete_record_is_an_error_not_a_skip() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    open(&path, "w").unwrap();
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{oops}\n{\"key\":1}\n")
        .unwrap();
    let error = open(&path, "w").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "AML journal \"{}\" has a corrupt record at line 2",
            path.display()
        )
    );
}

#[test]
fn records_must_be_one_line_of_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    open(&path, "w").unwrap();
    assert_eq!(
        append(&path, "{\"a\":\n1}"),
        Err(JournalError::InvalidRecord)
    );
    assert_eq!(append(&path, "nope"), Err(JournalError::InvalidRecord));
    assert_eq!(open(&path, "").unwrap_err(), JournalError::InvalidWorkflow);
}

#[test]
fn appending_to_a_missing_journal_reports_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = journal_path(&dir);
    let message = append(&path, "{}").unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "AML journal \"{}\" could not be opened: ",
            path.display()
        )),
        "{message}"
    );
}
