//! File work in the binding: confined access for <File>/<Include path>, <Skill> package
//! files and trusted source reads.

pub mod confined;
pub mod skill;
