//! Process supervision for AML (work in progress).
