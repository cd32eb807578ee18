//! A moto S3 server on 127.0.0.1 for the whole test run, stopped by PID.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Moto {
    child: Child,
    pub endpoint: String,
    port: u16,
}

fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// One raw HTTP/1.0 request; moto does not check signatures, so set-up needs none.
pub fn raw_request(port: u16, method: &str, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    Ok(reply)
}

impl Moto {
    pub fn start() -> Moto {
        let root = repository_root();
        let server = root.join("target/moto-venv/bin/moto_server");
        if !server.exists() {
            let status = Command::new(root.join("scripts/install-moto.sh"))
                .status()
                .expect("install-moto.sh");
            assert!(status.success(), "installing moto failed");
        }
        let port = free_port();
        let log = std::fs::File::create(root.join(format!("target/moto-{port}.log"))).expect("log");
        // Through scripts/moto-server.py: moto with its requests serialized, so conditional
        // writes are atomic as on S3 (moto's threaded server checks, then writes).
        let child = Command::new(root.join("target/moto-venv/bin/python"))
            .arg(root.join("scripts/moto-server.py"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("moto_server");
        let mut moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
            port,
        };
        // Readiness poll; the bound is only a hang guard for a loaded machine.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(reply) = raw_request(port, "GET", "/") {
                if reply.starts_with("HTTP/1.") {
                    break;
                }
            }
            if let Ok(Some(status)) = moto.child.try_wait() {
                panic!("moto_server exited early: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "moto_server did not become ready"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        moto.endpoint = format!("http://127.0.0.1:{}", moto.port);
        moto
    }

    pub fn create_bucket(&self, bucket: &str) {
        let reply = raw_request(self.port, "PUT", &format!("/{bucket}")).expect("create bucket");
        assert!(
            reply.starts_with("HTTP/1.0 200") || reply.starts_with("HTTP/1.1 200"),
            "{reply}"
        );
    }
}

impl Drop for Moto {
    // Also on a panic in set-up: the server never outlives the run.
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling the child we spawned and have not reaped yet (the PID is ours).
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
