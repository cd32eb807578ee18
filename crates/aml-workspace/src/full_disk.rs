//! What a save says when the disk (or a quota) is full: the Workspace it was saving and that
//! nothing was published, instead of only the staging file's path.

use crate::error::WorkspaceError;

/// A full disk (or quota) names only the staging file it hit, which means nothing to the user.
/// Every failing path of a save returns before the index is written, so the message can promise
/// that nothing was published; the original error stays as the cause and its code is kept.
pub(crate) fn out_of_space(workspace_id: Option<&str>, error: WorkspaceError) -> WorkspaceError {
    let code = match error.code.as_deref() {
        Some(code @ ("ENOSPC" | "EDQUOT")) => code.to_owned(),
        _ => return error,
    };
    let name = match workspace_id {
        Some(id) => format!("Workspace \"{id}\""),
        None => "Workspace".to_owned(),
    };
    let reason = if code == "ENOSPC" {
        "no space left on device"
    } else {
        "disk quota exceeded"
    };
    let mut wrapped = WorkspaceError::error(format!(
        "{name} was not saved: {reason} ({code}); nothing was published and its current revision is unchanged"
    ))
    .with_cause(error);
    wrapped.code = Some(code);
    wrapped
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn io_error(errno: i32) -> WorkspaceError {
        let error = std::io::Error::from_raw_os_error(errno);
        WorkspaceError::io(
            &error,
            "write",
            Path::new("/tmp/aml-workspace-x/save-1.tar.gz"),
        )
    }

    #[test]
    fn a_full_disk_names_the_workspace_and_keeps_the_code_and_cause() {
        let error = out_of_space(Some("reports"), io_error(libc::ENOSPC));
        assert_eq!(
            error.message,
            "Workspace \"reports\" was not saved: no space left on device (ENOSPC); nothing was published and its current revision is unchanged"
        );
        assert_eq!(error.code.as_deref(), Some("ENOSPC"));
        let cause = error.cause.expect("the I/O error stays as the cause");
        assert!(cause.message.contains("save-1.tar.gz"), "{}", cause.message);
        let quota = out_of_space(None, io_error(libc::EDQUOT));
        assert!(quota
            .message
            .starts_with("Workspace was not saved: disk quota exceeded (EDQUOT)"));
    }

    #[test]
    fn other_failures_pass_through_unchanged() {
        let denied = io_error(libc::EACCES);
        assert_eq!(out_of_space(Some("reports"), denied.clone()), denied);
    }
}
