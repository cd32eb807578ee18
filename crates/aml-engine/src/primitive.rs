//! The built-in primitive kinds and their stable codes. The engine is the source of truth:
//! the facade reads this table through the binding instead of keeping its own copy.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Primitive {
    Agent = 0,
    Context = 1,
    File = 2,
    FollowUp = 3,
    Include = 4,
    Loop = 5,
    Mcp = 6,
    Parallel = 7,
    Sandbox = 8,
    Script = 9,
    Skill = 10,
    System = 11,
    Tool = 12,
    Workspace = 13,
}

/// `(kind, label)` in code order: the marker value and the `<Label>` used in messages.
pub const PRIMITIVES: [(&str, &str); 14] = [
    ("agent", "Agent"),
    ("context", "Context.Provider"),
    ("file", "File"),
    ("follow-up", "FollowUp"),
    ("include", "Include"),
    ("loop", "Loop"),
    ("mcp", "Mcp"),
    ("parallel", "Parallel"),
    ("sandbox", "Sandbox"),
    ("script", "Script"),
    ("skill", "Skill"),
    ("system", "System"),
    ("tool", "Tool"),
    ("workspace", "Workspace"),
];

impl Primitive {
    pub fn from_code(code: u8) -> Option<Primitive> {
        use Primitive::*;
        const ALL: [Primitive; 14] = [
            Agent, Context, File, FollowUp, Include, Loop, Mcp, Parallel, Sandbox, Script, Skill,
            System, Tool, Workspace,
        ];
        ALL.get(code as usize).copied()
    }

    pub fn label(self) -> &'static str {
        PRIMITIVES[self as usize].1
    }

    /// Wrappers that do not change where content goes (placement looks through them).
    pub fn is_transparent(self) -> bool {
        matches!(self, Primitive::Context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_match_the_table() {
        for (code, (kind, label)) in PRIMITIVES.iter().enumerate() {
            let p = Primitive::from_code(code as u8).unwrap();
            assert_eq!(p as usize, code);
            assert_eq!(p.label(), *label);
            assert!(!kind.is_empty());
        }
        assert_eq!(Primitive::from_code(14), None);
    }
}

/// Every node adds one depth level except a Context Provider, which is a transparent
/// lexical wrapper (INVENTORY CTX-1).
pub(crate) fn kind_adds_depth(kind: NodeKind) -> bool {
    match kind {
        NodeKind::Component => true,
        NodeKind::Primitive(code) => Primitive::from_code(code) != Some(Primitive::Context),
    }
}

/// What kind of node the driver found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An ordinary function component (Fragment included).
    Component,
    /// A built-in primitive, by its code (see [`crate::Primitive`]).
    Primitive(u8),
}
