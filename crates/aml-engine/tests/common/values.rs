//! The driver's value model: what a test tree is made of, and the constructors that build one.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use aml_engine::{AgentEntry, McpKind, NodeKind, Primitive, TaskId};

use super::driver::Ctx;

static NEXT_IDENTITY: AtomicU64 = AtomicU64::new(1);

fn fresh_identity() -> u64 {
    NEXT_IDENTITY.fetch_add(1, Ordering::Relaxed)
}

pub type Body = Box<dyn Fn(&mut Ctx<'_>) -> V>;

pub struct NodeDef {
    pub identity: u64,
    pub kind: NodeKind,
    pub name: String,
    pub body: Body,
    /// Set for the capture primitives the driver runs itself.
    pub prim: Option<Prim>,
}

/// A provider: the ready plan in, the response text (or a thrown message) out.
pub type Provider = Rc<dyn Fn(&PlanRecord) -> Result<String, String>>;

/// The capture primitives, with their children.
pub enum Prim {
    Agent {
        entry: AgentEntry,
        children: V,
        /// Overrides the run's provider for this Agent (the `provider` prop).
        provider: Option<Provider>,
    },
    System(V),
    FollowUp(V),
    Tool {
        name: String,
        reference: u32,
    },
    Mcp {
        name: String,
        kind: McpKind,
        reference: u32,
    },
}

/// What a provider saw: one ready Agent plan, as the facade reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRecord {
    pub task: TaskId,
    pub span: String,
    pub parent: String,
    pub prompt: String,
    pub system: String,
    pub follow_ups: Vec<String>,
    pub tools: Vec<(String, u32)>,
    /// MCP grants as `(name, kind, reference)`, in grant order.
    pub mcp: Vec<(String, McpKind, u32)>,
    pub provider: Option<String>,
}

pub struct ArrayDef {
    pub identity: u64,
    pub items: RefCell<Vec<V>>,
}

/// A value as the driver classifies it.
#[derive(Clone)]
pub enum V {
    Text(String),
    /// Numbers are stringified by the driver; the engine only ever sees text.
    Num(f64),
    /// `null`, `undefined`, booleans.
    Empty,
    Array(Rc<ArrayDef>),
    Node(Rc<NodeDef>),
    /// A value the engine cannot render, by its `typeof`.
    Invalid(&'static str),
    /// An intrinsic / unknown JSX element.
    Unknown,
    /// A component that throws: the driver fails the task.
    Throw(String),
}

pub fn text(s: &str) -> V {
    V::Text(s.into())
}

pub fn arr(items: Vec<V>) -> V {
    V::Array(Rc::new(ArrayDef {
        identity: fresh_identity(),
        items: RefCell::new(items),
    }))
}

pub fn node(kind: NodeKind, name: &str, body: impl Fn(&mut Ctx<'_>) -> V + 'static) -> V {
    V::Node(Rc::new(NodeDef {
        identity: fresh_identity(),
        kind,
        name: name.into(),
        body: Box::new(body),
        prim: None,
    }))
}

fn prim_node(primitive: Primitive, prim: Prim) -> V {
    V::Node(Rc::new(NodeDef {
        identity: fresh_identity(),
        kind: NodeKind::Primitive(primitive as u8),
        name: primitive.label().into(),
        body: Box::new(|_| panic!("capture primitives have no body")),
        prim: Some(prim),
    }))
}

/// The entry of an Agent whose provider is named `provider`.
pub fn entry(provider: &str) -> AgentEntry {
    AgentEntry {
        has_provider: true,
        provider: Some(provider.into()),
        ..AgentEntry::default()
    }
}

/// `<Agent>` with the run's provider (named "p").
pub fn agent(children: V) -> V {
    agent_with(entry("p"), children)
}

/// `<Agent>` with an explicit entry (model, props.system, no provider…).
pub fn agent_with(entry: AgentEntry, children: V) -> V {
    prim_node(
        Primitive::Agent,
        Prim::Agent {
            entry,
            children,
            provider: None,
        },
    )
}

/// `<Agent provider={…}>`: its own provider, named `name`.
pub fn agent_using(
    name: &str,
    provider: impl Fn(&PlanRecord) -> Result<String, String> + 'static,
    children: V,
) -> V {
    prim_node(
        Primitive::Agent,
        Prim::Agent {
            entry: entry(name),
            children,
            provider: Some(Rc::new(provider)),
        },
    )
}

pub fn system(children: V) -> V {
    prim_node(Primitive::System, Prim::System(children))
}

pub fn follow_up(children: V) -> V {
    prim_node(Primitive::FollowUp, Prim::FollowUp(children))
}

pub fn tool(name: &str, reference: u32) -> V {
    prim_node(
        Primitive::Tool,
        Prim::Tool {
            name: name.into(),
            reference,
        },
    )
}

/// `<Mcp>`: a named server (`McpKind::Named`) or a descriptor of the given transport kind.
pub fn mcp(name: &str, kind: McpKind, reference: u32) -> V {
    prim_node(
        Primitive::Mcp,
        Prim::Mcp {
            name: name.into(),
            kind,
            reference,
        },
    )
}

/// A lexical wrapper primitive (e.g. `<Sandbox>`): a primitive node whose content is `children`.
pub fn wrapper(primitive: Primitive, children: V) -> V {
    node(
        NodeKind::Primitive(primitive as u8),
        primitive.label(),
        move |_| children.clone(),
    )
}

pub fn comp(name: &str, body: impl Fn(&mut Ctx<'_>) -> V + 'static) -> V {
    node(NodeKind::Component, name, body)
}

/// `n` nested components `C1 > C2 > ... > Cn`; the innermost returns `leaf`. Built lazily, so
/// a deep chain costs no recursion to construct or drop.
pub fn chain(n: usize, leaf: &'static str) -> V {
    fn link(i: usize, n: usize, leaf: &'static str) -> V {
        comp(&format!("C{i}"), move |_| {
            if i < n {
                link(i + 1, n, leaf)
            } else {
                text(leaf)
            }
        })
    }
    if n == 0 {
        text(leaf)
    } else {
        link(1, n, leaf)
    }
}
