//! The studio server on the addon's process runtime. `studioStart` resolves with the port
//! once bound; `studioClosed` is a pending Promise until `studioStop`, which is what keeps
//! `aml studio`'s process alive (a tokio listener alone does not hold Node's event loop).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use crate::boundary::async_runtime::spawn_promise;
use crate::boundary::guard::guard;

type Servers = Mutex<HashMap<u16, Arc<aml_studio::Studio>>>;

fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(Servers::default)
}

/// Starts serving `runs` on 127.0.0.1:`port` (0: any free port) with `token`; re-runs start
/// `program` with `prefix` before `run` (none when `program` is empty). Resolves with the port.
#[napi]
pub fn studio_start(
    env: &Env,
    runs: String,
    port: u32,
    token: String,
    program: String,
    prefix: Vec<String>,
) -> Result<napi::bindgen_prelude::Object<'_>> {
    spawn_promise(
        env,
        async move {
            let port = u16::try_from(port)
                .map_err(|_| Error::new(Status::InvalidArg, "AML studio port must be 0–65535"))?;
            let rerun = (!program.is_empty()).then(|| aml_studio::RerunCommand {
                program: PathBuf::from(program),
                prefix,
            });
            let config = aml_studio::StudioConfig {
                runs: PathBuf::from(runs),
                port,
                token,
                rerun,
            };
            let studio = aml_studio::start(config).await.map_err(|e| {
                Error::new(
                    Status::GenericFailure,
                    format!("AML studio could not listen: {e}"),
                )
            })?;
            let port = studio.port;
            servers()
                .lock()
                .expect("studio table")
                .insert(port, Arc::new(studio));
            Ok(port)
        },
        |_, port| Ok(u32::from(port)),
    )
}

/// A Promise that settles when the studio on `port` is stopped.
#[napi]
pub fn studio_closed(env: &Env, port: u32) -> Result<napi::bindgen_prelude::Object<'_>> {
    spawn_promise(
        env,
        async move {
            let studio = u16::try_from(port)
                .ok()
                .and_then(|port| servers().lock().expect("studio table").get(&port).cloned());
            if let Some(studio) = studio {
                studio.closed().await;
            }
            Ok(())
        },
        |_, ()| Ok(()),
    )
}

/// Stops the studio on `port` (nothing when none runs there).
#[napi]
pub fn studio_stop(port: u32) -> Result<()> {
    guard(|| {
        let studio = u16::try_from(port)
            .ok()
            .and_then(|port| servers().lock().expect("studio table").remove(&port));
        if let Some(studio) = studio {
            studio.close();
        }
        Ok(())
    })
}
