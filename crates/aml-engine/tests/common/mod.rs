//! A test driver for the sans-IO engine: a tiny value model and a loop that drives a
//! [`Domain`] with a mirror stack, the way the JS facade does. Shared by the test binaries.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

use aml_engine::{Domain, EvalError, Limits, NodeKind, Op, SpanFailure, TaskId};
use serde_json::Value;

static NEXT_IDENTITY: AtomicU32 = AtomicU32::new(1);

fn fresh_identity() -> u32 {
    NEXT_IDENTITY.fetch_add(1, Ordering::Relaxed)
}

pub type Body = Box<dyn Fn(&mut Ctx<'_>) -> V>;

pub struct NodeDef {
    pub identity: u32,
    pub kind: NodeKind,
    pub name: String,
    pub body: Body,
}

pub struct ArrayDef {
    pub identity: u32,
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
    }))
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

#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Engine(EvalError),
    Thrown(String),
}

impl Failure {
    pub fn message(&self) -> String {
        match self {
            Failure::Engine(e) => e.to_string(),
            Failure::Thrown(m) => m.clone(),
        }
    }
}

/// One evaluation domain plus every trace record the driver drained, as JSON.
pub struct Run {
    pub d: Domain,
    pub records: Vec<Value>,
}

/// What a component sees: the run, its task, and its own node.
pub struct Ctx<'a> {
    pub run: &'a mut Run,
    pub task: TaskId,
    pub this: Rc<NodeDef>,
}

impl Ctx<'_> {
    /// A component-local `evaluate()`: a nested task whose parent is this component's task.
    pub fn evaluate(&mut self, v: V) -> Result<String, Failure> {
        let nested = self
            .run
            .d
            .new_task(Some(self.task))
            .map_err(Failure::Engine)?;
        assert_ne!(nested, self.task);
        self.run.drive(nested, v)
    }

    pub fn depth(&mut self) -> u64 {
        self.run.d.depth(self.task).unwrap()
    }

    pub fn current_span(&mut self) -> String {
        self.run.d.current_span(self.task).unwrap().to_string()
    }
}

impl Run {
    pub fn new(limits: Limits) -> Run {
        Run {
            d: Domain::new(limits),
            records: Vec::new(),
        }
    }

    /// Tracing on and the root span open, as the facade does when a listener exists.
    pub fn traced(limits: Limits) -> Run {
        let mut run = Run::new(limits);
        run.d.set_tracing(true);
        run.d.open_root();
        run
    }

    /// Evaluates `v` as a root task.
    pub fn eval(&mut self, v: V) -> Result<String, Failure> {
        let task = self.d.new_task(None).map_err(Failure::Engine)?;
        self.drive(task, v)
    }

    /// Drains the tracer. When the last step said nothing was pending, nothing may be.
    fn collect(&mut self, pending: bool) {
        let drained = self.d.drain_trace();
        assert!(
            pending || drained.is_empty(),
            "trace_pending was false but {} records were pending",
            drained.len()
        );
        self.records
            .extend(drained.iter().map(|r| serde_json::to_value(r).unwrap()));
    }

    pub fn close_root(&mut self, failure: Option<SpanFailure>) {
        self.d.close_root(failure);
        self.collect(true);
    }

    pub fn drive(&mut self, task: TaskId, root: V) -> Result<String, Failure> {
        // Mirror of the engine's frames: the JS object of each frame, plus (for arrays) the
        // index of the next element to read.
        let mut mirror: Vec<(V, usize)> = Vec::new();
        let mut next = root;
        loop {
            let fed = match &next {
                V::Text(s) => self.d.text(task, s),
                V::Num(n) => self.d.text(task, &n.to_string()),
                V::Empty => self.d.empty(task),
                V::Array(a) => self
                    .d
                    .array(task, a.identity, a.items.borrow().len() as u32),
                V::Node(n) => self.d.node(task, n.identity, n.kind, &n.name),
                V::Invalid(t) => self.d.invalid(task, t),
                V::Unknown => self.d.unknown_element(task),
                V::Throw(message) => {
                    let failure = SpanFailure {
                        error_type: "Error".into(),
                        message: message.clone(),
                    };
                    self.d.fail(task, failure).map_err(Failure::Engine)?;
                    self.collect(true);
                    return Err(Failure::Thrown(message.clone()));
                }
            };
            let step = fed.map_err(Failure::Engine)?;
            self.collect(step.trace_pending);
            mirror.push((next, 0));
            let height = step.height as usize;
            assert!(
                height <= mirror.len(),
                "height {height} > mirror {}",
                mirror.len()
            );
            if step.op != Op::Error {
                // A popped array must have been read to its end.
                for (v, read) in &mirror[height..] {
                    if let V::Array(a) = v {
                        assert_eq!(*read, a.items.borrow().len(), "array popped early");
                    }
                }
            }
            mirror.truncate(height);
            match step.op {
                Op::Read => {
                    let Some((V::Array(a), read)) = mirror.last_mut() else {
                        panic!("Read without an array on top");
                    };
                    next = a.items.borrow()[*read].clone();
                    *read += 1;
                }
                Op::Invoke | Op::Primitive => {
                    let Some((V::Node(n), _)) = mirror.last() else {
                        panic!("{:?} without a node on top", step.op);
                    };
                    let n = n.clone();
                    assert_eq!(self.d.kind_on_top(task).unwrap(), Some(n.kind));
                    assert_eq!(step.op == Op::Invoke, n.kind == NodeKind::Component);
                    let mut ctx = Ctx {
                        run: self,
                        task,
                        this: n.clone(),
                    };
                    next = (n.body)(&mut ctx);
                }
                Op::Children | Op::Agent => {
                    panic!("{:?}: this driver models components only", step.op)
                }
                Op::Done => {
                    assert!(mirror.is_empty());
                    let out = self.d.finish(task).map_err(Failure::Engine);
                    self.collect(true);
                    return out;
                }
                Op::Error => {
                    assert_eq!(height, 0);
                    let err = self.d.take_error(task).map_err(Failure::Engine)?;
                    self.collect(true);
                    return Err(Failure::Engine(err));
                }
            }
        }
    }
}

/// One line per record: `start trace-1<trace-0 App`, `end trace-1 ok`, `end trace-1 error`.
pub fn summary(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            let id = r["spanId"].as_str().unwrap();
            match r["type"].as_str().unwrap() {
                "span.start" => {
                    let parent = r.get("parentSpanId").and_then(Value::as_str).unwrap_or("-");
                    format!("start {id}<{parent} {}", r["name"].as_str().unwrap())
                }
                "span.end" => format!("end {id} {}", r["status"].as_str().unwrap()),
                other => format!("{other} {id}"),
            }
        })
        .collect()
}
