//! Routing: the page, its assets, and the JSON API over the run store.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};

use crate::assets::{ASSETS, CSP, INDEX};
use crate::config::State;
use crate::guard::{host_allowed, query_param, request_token, token_matches};
use crate::rerun;

/// The largest events chunk one poll returns (the page asks again from `next`).
const EVENTS_CHUNK: usize = 8 * 1024 * 1024;

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    Response::builder()
        .status(status)
        .header(CONTENT_TYPE, content_type)
        .header(CACHE_CONTROL, "no-store")
        .header("content-security-policy", CSP)
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer")
        .body(Full::new(body.into()))
        .expect("static headers are valid")
}

fn json_reply(status: StatusCode, value: &Value) -> Reply {
    reply(status, "application/json", value.to_string())
}

fn error(status: StatusCode, message: &str) -> Reply {
    json_reply(status, &json!({ "error": message }))
}

pub(crate) async fn handle(state: &State, request: Request<Incoming>) -> Reply {
    if !host_allowed(&request, state.port) {
        return error(StatusCode::FORBIDDEN, "forbidden host");
    }
    if !token_matches(request_token(&request).as_deref(), &state.config.token) {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong token");
    }
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or("").to_string();
    let method = request.method().clone();
    // The body is never read (parameters travel in the query), so its size cannot matter:
    // dropping it unread makes hyper close the connection instead of buffering it.
    drop(request);
    if method == Method::GET {
        if path == "/" {
            return reply(
                StatusCode::OK,
                "text/html; charset=utf-8",
                INDEX.replace("__TOKEN__", &state.config.token),
            );
        }
        if let Some((_, content_type, body)) = ASSETS.iter().find(|(p, _, _)| *p == path) {
            return reply(StatusCode::OK, content_type, *body);
        }
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let runs = &state.config.runs;
    match (method, segments.as_slice()) {
        (Method::GET, ["api", "runs"]) => match aml_runs::list(runs) {
            Ok(list) => json_reply(StatusCode::OK, &Value::Array(list)),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        },
        (Method::GET, ["api", "runs", id]) => match aml_runs::read_meta(runs, id) {
            Ok(meta) => json_reply(StatusCode::OK, &meta),
            Err(e) => error(StatusCode::NOT_FOUND, &e.to_string()),
        },
        (Method::GET, ["api", "runs", id, "events"]) => {
            let offset = query_param(&query, "offset")
                .and_then(|o| o.parse().ok())
                .unwrap_or(0);
            match aml_runs::read_events(runs, id, offset, EVENTS_CHUNK) {
                Ok(chunk) => json_reply(
                    StatusCode::OK,
                    &json!({ "next": chunk.next, "text": chunk.text }),
                ),
                Err(e) => error(StatusCode::NOT_FOUND, &e.to_string()),
            }
        }
        (Method::POST, ["api", "runs", id, "rerun"]) => {
            let Some(command) = &state.config.rerun else {
                return error(StatusCode::NOT_IMPLEMENTED, "re-runs are not enabled");
            };
            let Some(step) = query_param(&query, "step") else {
                return error(StatusCode::BAD_REQUEST, "missing step");
            };
            let meta = match aml_runs::read_meta(runs, id) {
                Ok(meta) => meta,
                Err(e) => return error(StatusCode::NOT_FOUND, &e.to_string()),
            };
            match rerun::start(command, &state.reruns, runs, id, &meta, &step) {
                Ok(pid) => json_reply(StatusCode::ACCEPTED, &json!({ "pid": pid })),
                Err(message) => error(StatusCode::CONFLICT, &message),
            }
        }
        _ => error(StatusCode::NOT_FOUND, "not found"),
    }
}
