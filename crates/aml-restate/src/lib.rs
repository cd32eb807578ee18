//! AML's step journal kept durably in Restate (docs/DURABLE.md): one keyed Virtual Object per
//! workflow, whose `record` and `load` handlers the `@aml-jsx/sdk/restate` entry defines.
//!
//! Why through the ingress and not the invocation's own context: Restate replays an
//! invocation's journal by the *order* of its operations, and AML settles concurrent Agents
//! in whatever order they finish. Recording a step as a separate call to the object, from
//! outside the invocation's journal, never depends on that order: a retried invocation loads
//! what every earlier attempt recorded and replays it by position key, as the file and memory
//! journals do.

use std::time::Duration;

use reqwest::{Client, StatusCode, Url};
use serde_json::Value;

/// Why the object could not be reached or answered unusably.
#[derive(Debug, thiserror::Error)]
pub enum IngressError {
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Transport(String),
    #[error("Restate answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("Restate answered a body that is not a JSON array of entries")]
    Body,
}

/// The journal object of one workflow, reached over Restate's HTTP ingress.
pub struct IngressJournal {
    client: Client,
    load: Url,
    record: Url,
    headers: Vec<(String, String)>,
}

impl IngressJournal {
    /// The object `object` keyed `key` behind the ingress at `ingress` (`http(s)://host:port`,
    /// optionally with a path prefix). `headers` go with every request (an ingress that wants
    /// authentication); `timeout` bounds each request.
    pub fn new(
        ingress: &str,
        object: &str,
        key: &str,
        headers: Vec<(String, String)>,
        timeout: Duration,
    ) -> Result<IngressJournal, IngressError> {
        let base = Url::parse(ingress).map_err(|error| {
            IngressError::Config(format!("ingress {ingress:?} is not a URL: {error}"))
        })?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(IngressError::Config(format!(
                "ingress {ingress:?} must be an http or https URL"
            )));
        }
        let handler = |name: &str| {
            let mut url = base.clone();
            url.path_segments_mut()
                .expect("checked: can be a base")
                .pop_if_empty()
                .push(object)
                .push(key)
                .push(name);
            url
        };
        // reqwest is built without a bundled crypto provider (as in aml-s3) and refuses to
        // build a client until one is installed, even for plain http.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|error| IngressError::Config(error.to_string()))?;
        Ok(IngressJournal {
            client,
            load: handler("load"),
            record: handler("record"),
            headers,
        })
    }

    async fn post(&self, url: &Url, body: String) -> Result<String, IngressError> {
        let mut request = self
            .client
            .post(url.clone())
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let response = request
            .send()
            .await
            .map_err(|error| IngressError::Transport(transport(&error)))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|error| IngressError::Transport(transport(&error)))?;
        if status != StatusCode::OK {
            let body: String = text.chars().take(300).collect();
            return Err(IngressError::Status {
                status: status.as_u16(),
                body,
            });
        }
        Ok(text)
    }

    /// Every entry recorded so far, as a JSON array's text (the facade checks each entry).
    pub async fn load(&self) -> Result<String, IngressError> {
        let text = self.post(&self.load, "null".to_owned()).await?;
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(_)) => Ok(text),
            _ => Err(IngressError::Body),
        }
    }

    /// Records one entry (`{ key, digest, kind, value }` JSON); resolves once Restate has
    /// stored it, so the step is durable before the workflow goes on.
    pub async fn record(&self, entry: String) -> Result<(), IngressError> {
        self.post(&self.record, entry).await.map(drop)
    }
}

/// reqwest's message with its causes (the first line alone says only "error sending request").
fn transport(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests;
