//! `workspace.json`: the authoritative list of retained revisions and the current one.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, WorkspaceError};
use crate::paths::is_normalized;

/// Largest index accepted (4 MiB).
pub const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;
pub const INDEX_PATH: &str = "workspace.json";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Archive,
    Folder,
}

impl Format {
    pub fn parse(value: &str) -> Option<Format> {
        match value {
            "archive" => Some(Format::Archive),
            "folder" => Some(Format::Folder),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Archive => "archive",
            Format::Folder => "folder",
        }
    }
    /// The index `path` of a revision: the archive object, or the folder prefix.
    pub fn revision_path(self, id: &str) -> String {
        match self {
            Format::Archive => format!("revisions/{id}.tar.gz"),
            Format::Folder => format!("revisions/{id}/"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Revision {
    pub created_at: String,
    pub format: Format,
    pub id: String,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkspaceIndex {
    pub version: u32,
    pub current: String,
    /// Newest first.
    pub revisions: Vec<Revision>,
}

fn invalid_revision() -> WorkspaceError {
    WorkspaceError::error("Workspace index contains an invalid revision")
}

impl WorkspaceIndex {
    /// Parses and validates an index body (already bounded by [`MAX_INDEX_BYTES`]).
    pub fn parse(bytes: &[u8]) -> Result<WorkspaceIndex> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|_| WorkspaceError::error("Workspace index is not valid JSON"))?;
        let invalid = || WorkspaceError::error("Workspace index is invalid");
        let object = value.as_object().ok_or_else(invalid)?;
        if object.get("version").and_then(Value::as_u64) != Some(1)
            || object.get("version").and_then(Value::as_f64) != Some(1.0)
        {
            return Err(invalid());
        }
        let current = object.get("current").and_then(Value::as_str);
        let listed = object
            .get("revisions")
            .and_then(Value::as_array)
            .ok_or_else(invalid)?;
        let current = current.ok_or_else(invalid)?;
        let mut revisions = Vec::with_capacity(listed.len());
        for entry in listed {
            revisions.push(parse_revision(entry)?);
        }
        let mut ids: Vec<&str> = revisions.iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|pair| pair[0] == pair[1]) {
            return Err(WorkspaceError::error(
                "Workspace index contains duplicate revisions",
            ));
        }
        if !revisions.iter().any(|revision| revision.id == current) {
            return Err(WorkspaceError::error(
                "Workspace index current revision is invalid",
            ));
        }
        Ok(WorkspaceIndex {
            version: 1,
            current: current.into(),
            revisions,
        })
    }

    pub fn current_revision(&self) -> Option<&Revision> {
        self.find(&self.current)
    }

    pub fn find(&self, id: &str) -> Option<&Revision> {
        self.revisions.iter().find(|revision| revision.id == id)
    }

    /// The index after publishing `revision`: it becomes current and first; history beyond
    /// `retention` (which counts the new revision) is cut. Returns the index and the
    /// revisions that fell out (to prune once the index is published).
    pub fn publish(
        previous: Option<&WorkspaceIndex>,
        revision: Revision,
        retention: usize,
    ) -> (WorkspaceIndex, Vec<Revision>) {
        let mut revisions = vec![revision];
        if let Some(previous) = previous {
            revisions.extend(previous.revisions.iter().cloned());
        }
        let dropped = revisions.split_off(retention.max(1).min(revisions.len()));
        let current = revisions[0].id.clone();
        let index = WorkspaceIndex {
            version: 1,
            current,
            revisions,
        };
        (index, dropped)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("an index always serializes")
    }
}

/// A revision id names an object, so it must be one safe path segment.
pub fn is_revision_id(id: &str) -> bool {
    is_normalized(id)
        && id != "."
        && id != ".."
        && !id.contains('/')
        && !id.contains('\\')
        && id.len() <= 200
}

fn parse_revision(value: &Value) -> Result<Revision> {
    let object = value.as_object().ok_or_else(invalid_revision)?;
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    let (Some(created_at), Some(format), Some(id), Some(path)) =
        (text("createdAt"), text("format"), text("id"), text("path"))
    else {
        return Err(invalid_revision());
    };
    let format = Format::parse(format).ok_or_else(invalid_revision)?;
    if !is_revision_id(id) || !is_iso_timestamp(created_at) || path != format.revision_path(id) {
        return Err(invalid_revision());
    }
    Ok(Revision {
        created_at: created_at.into(),
        format,
        id: id.into(),
        path: path.into(),
    })
}

/// Whether `value` is exactly what JavaScript's `Date.prototype.toISOString` prints for some
/// date (`YYYY-MM-DDTHH:mm:ss.sssZ`), so `createdAt` round-trips unchanged.
pub fn is_iso_timestamp(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() != 24 {
        return false;
    }
    let shape = b"dddd-dd-ddTdd:dd:dd.dddZ";
    if !bytes
        .iter()
        .zip(shape)
        .all(|(byte, expected)| match expected {
            b'd' => byte.is_ascii_digit(),
            _ => byte == expected,
        })
    {
        return false;
    }
    let number = |from: usize, to: usize| value[from..to].parse::<u32>().unwrap_or(u32::MAX);
    let (year, month, day) = (number(0, 4), number(5, 7), number(8, 10));
    let (hour, minute, second) = (number(11, 13), number(14, 16), number(17, 19));
    (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && hour < 24
        && minute < 60
        && second < 60
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `new Date().toISOString()` for `time`.
pub fn iso_timestamp(time: SystemTime) -> String {
    let millis = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let days = millis.div_euclid(86_400_000);
    let in_day = millis.rem_euclid(86_400_000);
    // Civil-from-days (proleptic Gregorian), valid for every date after 1970.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn revision_ids_use_javascripts_white_space() {
        // JavaScript's trim keeps U+0085 and removes U+FEFF; Rust's `trim` does the opposite.
        // A revision id the JS side accepts must be accepted here, and the reverse.
        assert!(is_revision_id("\u{85}r"));
        assert!(is_revision_id("r\u{85}"));
        assert!(!is_revision_id("\u{FEFF}r"));
        assert!(!is_revision_id("r\u{FEFF}"));
        assert!(!is_revision_id(" r"));
    }

    fn revision(id: &str) -> String {
        format!(
            r#"{{"createdAt":"2026-07-30T02:11:04.822Z","format":"archive","id":"{id}","path":"revisions/{id}.tar.gz"}}"#
        )
    }

    fn message(body: &str) -> String {
        WorkspaceIndex::parse(body.as_bytes()).unwrap_err().message
    }

    #[test]
    fn parses_and_round_trips() {
        let body = format!(
            r#"{{"version":1,"current":"a","revisions":[{},{{"createdAt":"2026-07-29T21:40:11.183Z","format":"folder","id":"b","path":"revisions/b/"}}]}}"#,
            revision("a")
        );
        let index = WorkspaceIndex::parse(body.as_bytes()).unwrap();
        assert_eq!(index.revisions[1].format, Format::Folder);
        assert_eq!(String::from_utf8(index.to_bytes()).unwrap(), body);
    }

    #[test]
    fn every_validation_message() {
        assert_eq!(message("{"), "Workspace index is not valid JSON");
        assert_eq!(message("[]"), "Workspace index is invalid");
        assert_eq!(
            message(r#"{"version":2,"current":"a","revisions":[]}"#),
            "Workspace index is invalid"
        );
        assert_eq!(
            message(r#"{"version":1,"current":"a"}"#),
            "Workspace index is invalid"
        );
        assert_eq!(
            message(r#"{"version":1,"revisions":[]}"#),
            "Workspace index is invalid"
        );
        let bad_time = r#"{"version":1,"current":"a","revisions":[{"createdAt":"2026-02-30T00:00:00.000Z","format":"archive","id":"a","path":"revisions/a.tar.gz"}]}"#;
        assert_eq!(
            message(bad_time),
            "Workspace index contains an invalid revision"
        );
        let bad_path = r#"{"version":1,"current":"a","revisions":[{"createdAt":"2026-02-03T00:00:00.000Z","format":"archive","id":"a","path":"revisions/../a.tar.gz"}]}"#;
        assert_eq!(
            message(bad_path),
            "Workspace index contains an invalid revision"
        );
        let dup = format!(
            r#"{{"version":1,"current":"a","revisions":[{},{}]}}"#,
            revision("a"),
            revision("a")
        );
        assert_eq!(
            message(&dup),
            "Workspace index contains duplicate revisions"
        );
        let missing = format!(
            r#"{{"version":1,"current":"z","revisions":[{}]}}"#,
            revision("a")
        );
        assert_eq!(
            message(&missing),
            "Workspace index current revision is invalid"
        );
    }

    #[test]
    fn iso_timestamps_round_trip_like_javascript() {
        assert_eq!(iso_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_785_377_464_822);
        assert_eq!(iso_timestamp(t), "2026-07-30T02:11:04.822Z");
        assert_eq!(
            iso_timestamp(UNIX_EPOCH + Duration::from_millis(951_782_400_000)),
            "2000-02-29T00:00:00.000Z"
        );
        assert!(is_iso_timestamp("2024-02-29T23:59:59.999Z"));
        assert!(!is_iso_timestamp("2023-02-29T00:00:00.000Z"));
        assert!(!is_iso_timestamp("2023-01-01T00:00:00Z"));
        assert!(!is_iso_timestamp("2023-01-01T24:00:00.000Z"));
    }

    #[test]
    fn publication_keeps_retention_revisions_newest_first() {
        let make = |id: &str| Revision {
            created_at: "2026-01-01T00:00:00.000Z".into(),
            format: Format::Archive,
            id: id.into(),
            path: Format::Archive.revision_path(id),
        };
        let (one, dropped) = WorkspaceIndex::publish(None, make("a"), 2);
        assert!(dropped.is_empty());
        let (two, _) = WorkspaceIndex::publish(Some(&one), make("b"), 2);
        let (three, dropped) = WorkspaceIndex::publish(Some(&two), make("c"), 2);
        assert_eq!(three.current, "c");
        let ids: Vec<_> = three.revisions.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["c", "b"]);
        assert_eq!(dropped[0].id, "a");
    }
}
