//! What went wrong with a journal request, and whether trying again can help
//! (docs/DURABLE.md, "Failures"). The class is decided here, where the HTTP status is known;
//! the binding hands it to JavaScript as the error's `code`, and `describeFailure()` maps each
//! code to its kind and retryability in one place.

/// Why the journal object could not be reached or answered unusably.
#[derive(Debug, thiserror::Error)]
pub enum IngressError {
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Transport(String),
    #[error("Restate answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("Restate answered a body that is not {0}")]
    Body(&'static str),
    #[error("{0}")]
    TooLarge(String),
}

/// The classes a caller acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Timeouts, connection failures, 5xx, 429, 408, an unreadable answer: the server or the
    /// path to it was briefly unwell; a retry of the attempt goes on from the journal.
    Unavailable,
    /// 409: the attempt fence refused a record (another attempt loaded since). The attempt is
    /// stale; Restate has replaced it, and its retry loads afresh.
    Fenced,
    /// 404: nothing at the ingress answers for the journal object. No retry can help until the
    /// deployment registers it.
    Deployment,
    /// Any other 4xx (a request the ingress refuses: authentication, a malformed record): no
    /// retry can help.
    Rejected,
    /// An entry or a journal over the documented bounds.
    TooLarge,
}

impl Failure {
    /// The JavaScript error `code` of this class.
    pub fn code(self) -> &'static str {
        match self {
            Failure::Unavailable => "AML_JOURNAL_UNAVAILABLE",
            Failure::Fenced => "AML_JOURNAL_FENCED",
            Failure::Deployment => "AML_JOURNAL_DEPLOYMENT",
            Failure::Rejected => "AML_JOURNAL_REJECTED",
            Failure::TooLarge => "AML_JOURNAL_TOO_LARGE",
        }
    }
}

impl IngressError {
    pub fn failure(&self) -> Failure {
        match self {
            IngressError::Transport(_) | IngressError::Body(_) => Failure::Unavailable,
            IngressError::Status { status, .. } => match status {
                408 | 429 | 500..=599 => Failure::Unavailable,
                409 => Failure::Fenced,
                404 => Failure::Deployment,
                _ => Failure::Rejected,
            },
            IngressError::Config(_) => Failure::Rejected,
            IngressError::TooLarge(_) => Failure::TooLarge,
        }
    }

    /// The message with what to do where the class has a fix.
    pub fn explained(&self, object: &str) -> String {
        match self.failure() {
            Failure::Deployment => format!(
                "{self} (the journal object {object} is not registered at this ingress: bind the workflow's `journal` to the same endpoint as its `workflow` and register the deployment)"
            ),
            _ => self.to_string(),
        }
    }
}
