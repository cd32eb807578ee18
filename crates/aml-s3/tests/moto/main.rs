//! The S3 proof: the native client, the lease and the storage against a real moto server.
//! One server serves every case; each case gets its own bucket.

mod cases_client;
mod cases_lock;
mod cases_storage;
mod server;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use aml_s3::{Clock, NativeS3Client, S3Config, S3Credentials};
use chrono::{DateTime, Utc};

pub type Case = fn(Env) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// What a case gets: the endpoint and a fresh bucket.
#[derive(Clone)]
pub struct Env {
    pub endpoint: String,
    pub bucket: String,
}

impl Env {
    pub fn config(&self) -> S3Config {
        S3Config {
            bucket: self.bucket.clone(),
            region: None,
            endpoint: Some(self.endpoint.clone()),
            credentials: Some(S3Credentials {
                access_key_id: "testing".into(),
                secret_access_key: "testing".into(),
                session_token: None,
            }),
            force_path_style: true,
        }
    }

    pub fn client(&self) -> Arc<NativeS3Client> {
        Arc::new(NativeS3Client::new(&self.config()).expect("client"))
    }
}

/// Wall clock plus an adjustable offset, so a lock can be aged without waiting.
#[derive(Default)]
pub struct ShiftedClock {
    offset: Mutex<chrono::Duration>,
}

impl ShiftedClock {
    pub fn shift(&self, by: chrono::Duration) {
        *self.offset.lock().unwrap() += by;
    }
}

impl Clock for ShiftedClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + *self.offset.lock().unwrap()
    }
}

fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let cases: Vec<(&str, Case)> =
        [cases_client::CASES, cases_lock::CASES, cases_storage::CASES].concat();
    // `npm test` on a machine that cannot install moto (scripts/test-groups.js): say so and
    // count nothing as run, rather than fail on the missing server or pretend to pass.
    if std::env::var_os("AML_TEST_SKIP_MOTO").is_some() {
        println!(
            "{} moto cases skipped: no moto S3 server on this machine (AML_TEST_SKIP_MOTO)",
            cases.len()
        );
        return;
    }
    let moto = server::Moto::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let counter = AtomicU64::new(0);
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, case) in cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let bucket = format!("aml-test-{}", counter.fetch_add(1, Ordering::Relaxed));
        moto.create_bucket(&bucket);
        let env = Env {
            endpoint: moto.endpoint.clone(),
            bucket,
        };
        ran += 1;
        match runtime.block_on(runtime.spawn(case(env))) {
            Ok(()) => println!("test {name} ... ok"),
            Err(error) => {
                println!("test {name} ... FAILED: {error}");
                failed.push(name);
            }
        }
    }
    drop(runtime);
    drop(moto);
    println!("\n{ran} moto cases, {} failed", failed.len());
    if !failed.is_empty() {
        println!("failed: {failed:?}");
        std::process::exit(1);
    }
}
