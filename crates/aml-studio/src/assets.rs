//! The page, embedded at build time: the studio works offline and serves no file from disk.

/// (path, content type, body). `index.html` gets the token substituted (`__TOKEN__`), so its
/// script and style requests carry it too.
pub(crate) const ASSETS: &[(&str, &str, &str)] = &[
    (
        "/app.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/app.js"),
    ),
    (
        "/app.css",
        "text/css; charset=utf-8",
        include_str!("assets/app.css"),
    ),
];

pub(crate) const INDEX: &str = include_str!("assets/index.html");

/// Forbids inline script and every origin but our own: even markup that escaped the page's
/// text-only rendering could not run or load anything.
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
