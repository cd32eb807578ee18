//! The driver: a [`Run`] owns one evaluation domain and drives tasks over it with a mirror
//! stack, answering each engine step the way the JS facade does.

use std::rc::Rc;

use aml_engine::{Domain, EvalError, Limits, NodeKind, Op, Policy, SpanFailure, Step, TaskId};
use serde_json::Value;

use super::values::{NodeDef, PlanRecord, Prim, Provider, V};

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
    /// Every plan a provider was called with, in call order.
    pub plans: Vec<PlanRecord>,
    /// The runtime default provider; echoes `[prompt]` unless replaced.
    pub provider: Provider,
    /// Provider calls holding a scheduler slot right now, and the most ever observed.
    pub active: u64,
    pub max_active: u64,
    /// Sandbox handshakes the driver accepted (`Op::Handshake`), in order.
    pub handshakes: u32,
}

/// Where a resumable drive stopped.
#[derive(Debug, PartialEq)]
pub enum Paused {
    Done(String),
    /// `Op::Agent`: the Agent on top of the task has a ready plan.
    Agent,
}

/// A task being driven step by step (see [`Run::resume`]).
pub struct Driver {
    pub task: TaskId,
    /// Mirror of the engine's frames: the value of each frame and, for arrays, the index
    /// of the next element to read.
    mirror: Vec<(V, usize)>,
    next: Option<V>,
    pending: Option<Step>,
    /// The Agent node a Loop render task parked (`Op::Park`) until `Op::Resume`.
    parked: Option<(V, usize)>,
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
        Run::with_policy(limits, Policy::default())
    }

    pub fn with_policy(limits: Limits, policy: Policy) -> Run {
        Run {
            d: Domain::with_policy(limits, policy),
            records: Vec::new(),
            plans: Vec::new(),
            provider: Rc::new(|plan: &PlanRecord| Ok(format!("[{}]", plan.prompt))),
            active: 0,
            max_active: 0,
            handshakes: 0,
        }
    }

    pub fn with_provider(
        mut self,
        provider: impl Fn(&PlanRecord) -> Result<String, String> + 'static,
    ) -> Run {
        self.provider = Rc::new(provider);
        self
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

    /// Fails `task` the way the facade does when user code throws.
    pub fn fail(&mut self, task: TaskId, message: &str) -> Failure {
        let failure = SpanFailure {
            error_type: "Error".into(),
            message: message.into(),
        };
        self.d.fail(task, failure).expect("the failed task is live");
        self.collect(true);
        Failure::Thrown(message.into())
    }

    /// The ready plan on top of `task`, as the facade reads it after `Op::Agent`.
    pub fn plan(&mut self, task: TaskId) -> PlanRecord {
        let plan = self.d.agent_plan(task).expect("a ready plan");
        PlanRecord {
            task,
            span: plan.span_id.to_string(),
            parent: plan.parent_span.to_string(),
            prompt: plan.prompt().to_string(),
            system: plan.system(),
            follow_ups: plan.follow_ups().to_vec(),
            tools: plan
                .tools()
                .iter()
                .map(|t| (t.name.clone(), t.reference))
                .collect(),
            mcp: plan
                .mcp()
                .iter()
                .map(|m| (m.name.clone(), m.kind, m.reference))
                .collect(),
            provider: None,
        }
    }

    /// Starts driving `root` as `task`; nothing runs until [`Run::resume`].
    pub fn start(&self, task: TaskId, root: V) -> Driver {
        Driver {
            task,
            mirror: Vec::new(),
            next: Some(root),
            pending: None,
            parked: None,
        }
    }

    /// Hands a provider's text to the Agent `drv` paused at.
    pub fn complete_agent(&mut self, drv: &mut Driver, text: &str) {
        let step = self
            .d
            .agent_done(drv.task, text, text)
            .expect("agent_done on a live task");
        drv.pending = Some(step);
    }

    /// Runs `drv` until its value is done, it fails, or an Agent is ready.
    pub fn resume(&mut self, drv: &mut Driver) -> Result<Paused, Failure> {
        let task = drv.task;
        loop {
            let step = match drv.pending.take() {
                Some(step) => step,
                None => {
                    let next = drv.next.take().expect("a value to feed");
                    let fed = match &next {
                        V::Text(s) => self.d.text(task, s),
                        V::Num(n) => self.d.text(task, &n.to_string()),
                        V::Empty => self.d.empty(task),
                        V::Array(a) => {
                            self.d
                                .array(task, a.identity, a.items.borrow().len() as u32)
                        }
                        V::Node(n) => self.d.node(task, n.identity, n.kind, &n.name),
                        V::Invalid(t) => self.d.invalid(task, t),
                        V::Unknown => self.d.unknown_element(task),
                        V::Throw(message) => return Err(self.fail(task, message)),
                    };
                    let step = fed.map_err(Failure::Engine)?;
                    drv.mirror.push((next, 0));
                    step
                }
            };
            self.collect(step.trace_pending);
            let height = step.height as usize;
            let mirror = &mut drv.mirror;
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
                    drv.next = Some(a.items.borrow()[*read].clone());
                    *read += 1;
                }
                Op::Invoke | Op::Primitive => {
                    let Some((V::Node(n), _)) = mirror.last() else {
                        panic!("{:?} without a node on top", step.op);
                    };
                    let n = n.clone();
                    assert_eq!(self.d.kind_on_top(task).unwrap(), Some(n.kind));
                    assert_eq!(step.op == Op::Invoke, n.kind == NodeKind::Component);
                    match &n.prim {
                        Some(Prim::Agent { entry, .. }) => {
                            let s = self.d.enter_agent(task, entry.clone());
                            drv.pending = Some(s.map_err(Failure::Engine)?);
                        }
                        Some(Prim::System(_)) => {
                            drv.pending = Some(self.d.enter_system(task).map_err(Failure::Engine)?);
                        }
                        Some(Prim::FollowUp(_)) => {
                            let s = self.d.enter_follow_up(task);
                            drv.pending = Some(s.map_err(Failure::Engine)?);
                        }
                        Some(Prim::Tool { name, reference }) => {
                            let s = self.d.grant_tool(task, name, *reference);
                            drv.pending = Some(s.map_err(Failure::Engine)?);
                        }
                        Some(Prim::Mcp {
                            name,
                            kind,
                            reference,
                        }) => {
                            let s = self.d.grant_mcp(task, name, *kind, *reference);
                            drv.pending = Some(s.map_err(Failure::Engine)?);
                        }
                        None => {
                            let mut ctx = Ctx {
                                run: self,
                                task,
                                this: n.clone(),
                            };
                            drv.next = Some((n.body)(&mut ctx));
                        }
                    }
                }
                Op::Children => {
                    let Some((V::Node(n), _)) = mirror.last() else {
                        panic!("Children without a node on top");
                    };
                    drv.next = Some(match &n.prim {
                        Some(Prim::Agent { children, .. })
                        | Some(Prim::System(children))
                        | Some(Prim::FollowUp(children)) => children.clone(),
                        _ => panic!("Children for a node without children"),
                    });
                }
                Op::Handshake => {
                    // This driver accepts every handshake; the facade owns the real check.
                    self.handshakes += 1;
                    let s = self.d.agent_handshake_done(task);
                    drv.pending = Some(s.map_err(Failure::Engine)?);
                }
                Op::Park => {
                    drv.parked = Some(mirror.last().expect("Park with a node on top").clone());
                    drv.pending = Some(self.d.loop_park(task).map_err(Failure::Engine)?);
                }
                Op::Resume => {
                    assert!(mirror.is_empty(), "Resume with frames left");
                    mirror.push(drv.parked.take().expect("Resume after Park"));
                    let step = self.d.loop_resume(task).map_err(Failure::Engine)?;
                    assert!(step.is(Op::Primitive) && step.height == 1);
                    drv.pending = Some(step);
                }
                Op::Agent => return Ok(Paused::Agent),
                Op::Complete => panic!("Complete: this driver models no scope primitives"),
                Op::Done => {
                    assert!(mirror.is_empty());
                    let out = self.d.finish(task).map_err(Failure::Engine);
                    self.collect(true);
                    return out.map(Paused::Done);
                }
                Op::Error => {
                    // Frames stay for scope cleanup; take_error unwinds them.
                    let err = self.d.take_error(task).map_err(Failure::Engine)?;
                    self.collect(true);
                    return Err(Failure::Engine(err));
                }
            }
        }
    }

    /// The provider of the Agent `drv` is paused at: its own, else the run's.
    fn provider_of(&self, drv: &Driver) -> (Provider, Option<String>) {
        match drv.mirror.last() {
            Some((V::Node(n), _)) => match &n.prim {
                Some(Prim::Agent {
                    entry, provider, ..
                }) => (
                    provider.clone().unwrap_or_else(|| self.provider.clone()),
                    entry.provider.clone(),
                ),
                _ => panic!("Op::Agent without an Agent on top"),
            },
            _ => panic!("Op::Agent without a node on top"),
        }
    }

    /// Drives `root` as `task` to completion, running every ready Agent synchronously: it
    /// takes a scheduler slot (which must be free — a synchronous driver never waits),
    /// calls the provider and releases the slot, exactly around the provider call.
    pub fn drive(&mut self, task: TaskId, root: V) -> Result<String, Failure> {
        let mut drv = self.start(task, root);
        loop {
            match self.resume(&mut drv)? {
                Paused::Done(out) => return Ok(out),
                Paused::Agent => {
                    let (provider, name) = self.provider_of(&drv);
                    let mut plan = self.plan(task);
                    plan.provider = name;
                    assert!(
                        self.d.scheduler().request(task),
                        "a synchronous Agent call found no free slot"
                    );
                    self.active += 1;
                    self.max_active = self.max_active.max(self.active);
                    self.plans.push(plan.clone());
                    let response = provider(&plan);
                    self.active -= 1;
                    assert_eq!(self.d.scheduler().release(), None);
                    match response {
                        Ok(text) => self.complete_agent(&mut drv, &text),
                        Err(message) => return Err(self.fail(task, &message)),
                    }
                }
            }
        }
    }
}
