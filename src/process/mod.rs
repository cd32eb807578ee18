//! Processes: supervised host processes (spawnLocalProcess), one-shot Script execs, their
//! stdio pipes, and the Docker Sandbox's container execs.

pub mod docker;
pub mod docker_spawn;
pub mod exec;
pub mod local;
pub(crate) mod pipe;
pub mod supervisor;
