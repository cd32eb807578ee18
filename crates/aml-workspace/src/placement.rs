//! Inode placement hints. Materializations and folder revisions are thousands of files that
//! are created, and deleted again, within seconds. ext4 without a journal (this project's CI
//! and benchmark machines) refuses to reuse an inode freed in the last 60 s (6 min while its
//! inode table block is dirty) and finds that out one free inode at a time, so creating
//! files in a block group where files were just deleted — by us or by any other process
//! using the same `/tmp` — costs O(recent deletions) per file: seconds per 3,000-file tree.
//!
//! `FS_TOPDIR_FL` tells ext2/3/4's Orlov allocator that the subdirectories of a directory
//! are unrelated trees, so it spreads them over block groups with free inodes instead of
//! packing them beside their parent. Setting it on our own temporary root (and on a store's
//! `revisions/`) places each new tree away from the churn. It is only a hint: other
//! filesystems reject the ioctl, which is ignored.

use std::path::Path;

/// `FS_TOPDIR_FL` from `linux/fs.h`.
#[cfg(target_os = "linux")]
const FS_TOPDIR_FL: libc::c_int = 0x0002_0000;

/// Marks `directory` (which this process owns) as the top of unrelated subtrees; best effort.
#[cfg(target_os = "linux")]
pub fn mark_top_directory(directory: &Path) {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(dir) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(directory)
    else {
        return;
    };
    // The kernel reads and writes an `int` for these requests, whatever the macro's type says.
    let mut flags: libc::c_int = 0;
    // SAFETY: `dir` is an open descriptor for the duration of both calls, and `flags` is a
    // live, writable `c_int`, the size FS_IOC_GETFLAGS/FS_IOC_SETFLAGS transfer.
    unsafe {
        if libc::ioctl(dir.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) != 0 {
            return;
        }
        if flags & FS_TOPDIR_FL == 0 {
            flags |= FS_TOPDIR_FL;
            libc::ioctl(dir.as_raw_fd(), libc::FS_IOC_SETFLAGS, &flags);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn mark_top_directory(_directory: &Path) {}
