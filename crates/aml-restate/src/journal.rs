//! One workflow run's journal, reached over Restate's HTTP ingress.
//!
//! A record costs what its entry costs: the object keeps one state key per entry and runs
//! with lazy state, so a record reads two small keys and writes one, whatever the journal
//! holds. A load is one exclusive `load` (which moves the fence and starts a new run's
//! journal) and then `page` requests of about [`PAGE_BYTES`] each, so its cost is linear in
//! the journal and no single answer grows with it.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Client, StatusCode, Url};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::entry::{entry_problem, StoredEntry, MAX_ENTRY_BYTES, MAX_JOURNAL_BYTES};
use crate::failure::IngressError;
use crate::page::read_page;
use crate::seal::{Place, Sealer};

/// The header that carries an attempt's fence token.
pub const ATTEMPT_HEADER: &str = "x-aml-journal-attempt";
/// The header that names the run a request belongs to: a journal holds one run's entries.
pub const RUN_HEADER: &str = "x-aml-journal-run";

/// What a journal is opened with.
pub struct JournalConfig {
    /// `http(s)://host:port`, optionally with a path prefix.
    pub ingress: String,
    /// The journal object's name.
    pub object: String,
    /// The object's key: the workflow id.
    pub workflow: String,
    /// Sent with every request (an ingress that wants authentication).
    pub headers: Vec<(String, String)>,
    /// Bounds each request.
    pub timeout: Duration,
    /// The secret the deployment's workers share.
    pub secret: String,
    /// This run of the workflow ("" for none: a journal used outside `amlWorkflow`).
    pub run: String,
    /// This attempt's fence token, if it takes part in the fence.
    pub attempt: Option<String>,
}

/// The journal object of one workflow run.
pub struct IngressJournal {
    client: Client,
    load: Url,
    page: Url,
    pub(crate) record: Url,
    headers: Vec<(HeaderName, HeaderValue)>,
    sealer: Sealer,
    object: String,
    workflow: String,
    run: String,
    /// Bytes the object holds for this run, as far as this handle knows (loaded + recorded).
    held: AtomicU64,
}

/// A load's outcome.
pub struct Loaded {
    /// The opened entries, a JSON array of `{ key, digest, kind, value }`.
    pub entries: String,
    /// Stored entries that broke the shape rule or failed to open (forged, edited, sealed with
    /// another secret): never replayed.
    pub ignored: usize,
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow)]
    key: Cow<'a, str>,
    #[serde(borrow)]
    digest: Cow<'a, str>,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    value: &'a RawValue,
}

#[derive(Serialize)]
struct Stored<'a> {
    key: &'a str,
    digest: &'a str,
    sealed: &'a str,
}

#[derive(Serialize, Deserialize)]
struct Content<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    value: &'a RawValue,
}

#[derive(Serialize)]
struct Opened<'a> {
    key: &'a str,
    digest: &'a str,
    kind: &'a str,
    value: &'a RawValue,
}

#[derive(Deserialize)]
struct LoadAnswer {
    count: u64,
}

impl IngressJournal {
    pub fn new(config: JournalConfig) -> Result<IngressJournal, IngressError> {
        let JournalConfig {
            ingress,
            object,
            workflow,
            headers,
            timeout,
            secret,
            run,
            attempt,
        } = config;
        let base = Url::parse(&ingress).map_err(|error| {
            IngressError::Config(format!("ingress {ingress:?} is not a URL: {error}"))
        })?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(IngressError::Config(format!(
                "ingress {ingress:?} must be an http or https URL"
            )));
        }
        let sealer = Sealer::new(&secret).map_err(IngressError::Config)?;
        let handler = |name: &str| {
            let mut url = base.clone();
            url.path_segments_mut()
                .expect("checked: can be a base")
                .pop_if_empty()
                .push(&object)
                .push(&workflow)
                .push(name);
            url
        };
        // The protocol's own headers replace any of the same name the caller passed.
        let mut pairs: Vec<(String, String)> = headers
            .into_iter()
            .filter(|(name, _)| {
                !name.eq_ignore_ascii_case(ATTEMPT_HEADER) && !name.eq_ignore_ascii_case(RUN_HEADER)
            })
            .collect();
        if !run.is_empty() {
            pairs.push((RUN_HEADER.to_owned(), run.clone()));
        }
        if let Some(attempt) = attempt {
            pairs.push((ATTEMPT_HEADER.to_owned(), attempt));
        }
        let headers = pairs
            .into_iter()
            .map(|(name, value)| header(&name, &value))
            .collect::<Result<Vec<_>, _>>()?;
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
            page: handler("page"),
            record: handler("record"),
            headers,
            sealer,
            object,
            workflow,
            run,
            held: AtomicU64::new(0),
        })
    }

    /// The journal object's name (for messages).
    pub fn object(&self) -> &str {
        &self.object
    }

    async fn post(&self, url: &Url, body: String) -> Result<String, IngressError> {
        let bytes = self.post_bytes(url, body).await?;
        String::from_utf8(bytes).map_err(|_| IngressError::Body("UTF-8 text"))
    }

    async fn post_bytes(&self, url: &Url, body: String) -> Result<Vec<u8>, IngressError> {
        let mut request = self
            .client
            .post(url.clone())
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in &self.headers {
            request = request.header(name.clone(), value.clone());
        }
        let response = request
            .send()
            .await
            .map_err(|error| IngressError::Transport(transport(&error)))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|error| IngressError::Transport(transport(&error)))?;
        if status != StatusCode::OK {
            let body: String = String::from_utf8_lossy(&bytes).chars().take(300).collect();
            return Err(IngressError::Status {
                status: status.as_u16(),
                body,
            });
        }
        Ok(bytes.to_vec())
    }

    fn place<'a>(&'a self, key: &'a str, digest: &'a str) -> Place<'a> {
        Place {
            object: &self.object,
            workflow: &self.workflow,
            run: &self.run,
            key,
            digest,
        }
    }

    /// Every entry this run recorded that opens under the secret.
    pub async fn load(&self) -> Result<Loaded, IngressError> {
        let answer = self.post(&self.load, "null".to_owned()).await?;
        let LoadAnswer { count } =
            serde_json::from_str(&answer).map_err(|_| IngressError::Body("{ count }"))?;
        let mut entries = String::from("[");
        let mut ignored = 0;
        let mut held = 0u64;
        let mut from = 0u64;
        while from < count {
            let bytes = self
                .post_bytes(&self.page, format!(r#"{{"from":{from}}}"#))
                .await?;
            let page = read_page(&bytes).ok_or(IngressError::Body("a page of entries"))?;
            for raw in &page.entries {
                held += raw.len() as u64;
                // Not UTF-8 is not an entry either: ignored like any other broken one.
                match std::str::from_utf8(raw)
                    .ok()
                    .and_then(|json| self.open(json))
                {
                    Some(opened) => {
                        if entries.len() > 1 {
                            entries.push(',');
                        }
                        entries.push_str(&opened);
                    }
                    None => ignored += 1,
                }
            }
            match page.next {
                // The object moves on by at least one entry a page; anything else is a
                // broken answer, not a reason to loop.
                Some(next) if next > from => from = next,
                Some(_) => return Err(IngressError::Body("a page that moves on")),
                None => break,
            }
        }
        entries.push(']');
        self.held.store(held, Ordering::Relaxed);
        Ok(Loaded { entries, ignored })
    }

    /// The stored entry `json` opened as `{ key, digest, kind, value }`, if it keeps the shape
    /// rule and was sealed for its place under this secret.
    fn open(&self, json: &str) -> Option<String> {
        if entry_problem(json).is_some() {
            return None;
        }
        let stored: StoredEntry = serde_json::from_str(json).ok()?;
        let plain = self
            .sealer
            .open(&self.place(&stored.key, &stored.digest), &stored.sealed)?;
        let content: Content<'_> = serde_json::from_slice(&plain).ok()?;
        serde_json::to_string(&Opened {
            key: &stored.key,
            digest: &stored.digest,
            kind: &content.kind,
            value: content.value,
        })
        .ok()
    }

    /// Records one entry (`{ key, digest, kind, value }` JSON), sealed; resolves once Restate
    /// has stored it, so the step is durable before the workflow goes on. An entry or journal
    /// over the bounds fails before anything is sent.
    pub async fn record(&self, entry: &str) -> Result<(), IngressError> {
        let parsed: Entry<'_> = serde_json::from_str(entry).map_err(|_| {
            IngressError::Config(
                "AML journal entries must be { key, digest, kind, value } records".to_owned(),
            )
        })?;
        let content = serde_json::to_string(&Content {
            kind: parsed.kind.clone(),
            value: parsed.value,
        })
        .map_err(|error| IngressError::Config(error.to_string()))?;
        let sealed = self
            .sealer
            .seal(&self.place(&parsed.key, &parsed.digest), content.as_bytes())
            .map_err(IngressError::Config)?;
        let body = serde_json::to_string(&Stored {
            key: &parsed.key,
            digest: &parsed.digest,
            sealed: &sealed,
        })
        .map_err(|error| IngressError::Config(error.to_string()))?;
        if body.len() > MAX_ENTRY_BYTES {
            return Err(IngressError::TooLarge(format!(
                "step {} is {} bytes as stored, over the {MAX_ENTRY_BYTES}-byte limit of one entry",
                parsed.key,
                body.len()
            )));
        }
        if let Some(problem) = entry_problem(&body) {
            return Err(IngressError::Config(problem));
        }
        let size = body.len() as u64;
        let before = self.held.fetch_add(size, Ordering::Relaxed);
        if before + size > MAX_JOURNAL_BYTES {
            self.held.fetch_sub(size, Ordering::Relaxed);
            return Err(IngressError::TooLarge(format!(
                "step {} would bring the journal to {} bytes, over the {MAX_JOURNAL_BYTES}-byte limit of one run",
                parsed.key,
                before + size
            )));
        }
        match self.post(&self.record, body).await {
            Ok(_) => Ok(()),
            Err(error) => {
                self.held.fetch_sub(size, Ordering::Relaxed);
                Err(error)
            }
        }
    }
}

/// One header, checked when the journal opens rather than failing every request later.
fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), IngressError> {
    let parsed = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        IngressError::Config(format!("header {name:?} is not a valid HTTP header name"))
    })?;
    let value = HeaderValue::from_str(value).map_err(|_| {
        IngressError::Config(format!(
            "header {name:?} has a value that is not valid in HTTP"
        ))
    })?;
    Ok((parsed, value))
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
