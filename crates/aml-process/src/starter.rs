//! The child-creation strategy of this target, under one name for its two users: the host's
//! spawner thread and the supervisor process.

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) use crate::fork::Starter;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) use crate::vfork::Starter;
