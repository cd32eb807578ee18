//! A small mirror-stack driver for the `<Skill>` tests: the shared driver in `common` models
//! no scope primitives, and a Skill is a capture scope that completes through `skill_done`.
#![allow(dead_code)]

use aml_engine::{
    attributes_from_json, AgentEntry, Domain, EvalError, Limits, NodeKind, Op, Primitive,
    SkillGrant, Step, TaskId,
};
use serde_json::{json, Value};

/// A tiny value model: text, arrays, and the primitives a Skill interacts with.
#[derive(Clone)]
pub enum V {
    T(&'static str),
    Arr(Vec<V>),
    Agent(Box<V>),
    System(Box<V>),
    FollowUp(Box<V>),
    Tool(&'static str),
    /// A lexical wrapper primitive (`<Sandbox>` without a protocol): its body is its content.
    Wrap(Box<V>),
    /// `<Skill>` with inline children; `package` is what its completion registers.
    Skill {
        children: Box<V>,
        output: &'static str,
        package: Option<(&'static str, u32)>,
    },
}

pub use V::*;

pub fn agent(v: V) -> V {
    Agent(Box::new(v))
}

pub fn skill(children: V, output: &'static str) -> V {
    Skill {
        children: Box::new(children),
        output,
        package: None,
    }
}

/// A package Skill: its text (here just its name) stands for the metadata-only fallback.
pub fn package(name: &'static str, reference: u32) -> V {
    Skill {
        children: Box::new(T("")),
        output: name,
        package: Some((name, reference)),
    }
}

pub struct Run {
    pub d: Domain,
    next_identity: u64,
    /// `(prompt, system, follow-ups, skill references)` of every ready Agent, in call order.
    pub plans: Vec<(String, String, Vec<String>, Vec<u32>)>,
    /// Captured inline input of every completed Skill, in completion order.
    pub inputs: Vec<String>,
    pub records: Vec<Value>,
}

impl Run {
    pub fn new() -> Run {
        Run {
            d: Domain::new(Limits::default()),
            next_identity: 1,
            plans: vec![],
            inputs: vec![],
            records: vec![],
        }
    }

    pub fn traced() -> Run {
        let mut run = Run::new();
        run.d.set_tracing(true);
        run.d.open_root();
        run
    }

    fn collect(&mut self) {
        let drained = self.d.drain_trace();
        self.records
            .extend(drained.iter().map(|r| serde_json::to_value(r).unwrap()));
    }

    fn feed(&mut self, task: TaskId, v: &V) -> Result<Step, EvalError> {
        let identity = self.next_identity;
        self.next_identity += 1;
        let primitive = |p: Primitive| NodeKind::Primitive(p as u8);
        match v {
            T(s) => self.d.text(task, s),
            Arr(items) => self.d.array(task, identity, items.len() as u32),
            Agent(_) => self.d.node(task, identity, primitive(Primitive::Agent), ""),
            System(_) => self
                .d
                .node(task, identity, primitive(Primitive::System), ""),
            FollowUp(_) => self
                .d
                .node(task, identity, primitive(Primitive::FollowUp), ""),
            Tool(_) => self.d.node(task, identity, primitive(Primitive::Tool), ""),
            Wrap(_) => self
                .d
                .node(task, identity, primitive(Primitive::Sandbox), ""),
            Skill { .. } => self.d.node(task, identity, primitive(Primitive::Skill), ""),
        }
    }

    /// Drives `root` to its output; every Agent answers `[prompt]`.
    pub fn eval(&mut self, root: V) -> Result<String, EvalError> {
        let task = self.d.new_task(None)?;
        let mut mirror: Vec<(V, usize)> = vec![];
        let mut next = Some(root);
        loop {
            let value = next.take().expect("a value to feed");
            let mut step = self.feed(task, &value)?;
            mirror.push((value, 0));
            loop {
                self.collect();
                mirror.truncate(step.height as usize);
                let top = mirror.len().wrapping_sub(1);
                step = match step.op {
                    Op::Read => {
                        let (Arr(items), read) = &mut mirror[top] else {
                            panic!("Read without an array")
                        };
                        next = Some(items[*read].clone());
                        *read += 1;
                        break;
                    }
                    Op::Primitive => match &mirror[top].0 {
                        Agent(_) => self.d.enter_agent(
                            task,
                            AgentEntry {
                                has_provider: true,
                                provider: Some("p".into()),
                                ..AgentEntry::default()
                            },
                        )?,
                        System(_) => self.d.enter_system(task)?,
                        FollowUp(_) => self.d.enter_follow_up(task)?,
                        Tool(name) => self.d.grant_tool(task, name, 0)?,
                        Skill { .. } => {
                            let attributes = attributes_from_json(&json!({ "hasSource": false }));
                            let sensitive = attributes_from_json(&json!({ "source": "./s" }));
                            self.d
                                .enter_skill(task, "S".into(), attributes, sensitive)?
                        }
                        Wrap(body) => {
                            next = Some((**body).clone());
                            break;
                        }
                        _ => panic!("Primitive for a non-primitive"),
                    },
                    Op::Children => {
                        next = Some(match &mirror[top].0 {
                            Agent(c) | System(c) | FollowUp(c) => (**c).clone(),
                            Skill { children, .. } => (**children).clone(),
                            _ => panic!("Children for a childless value"),
                        });
                        break;
                    }
                    Op::Complete => {
                        let Skill {
                            output, package, ..
                        } = &mirror[top].0
                        else {
                            panic!("Complete for a non-Skill")
                        };
                        let (output, package) = (*output, *package);
                        let (_, input) = self.d.scope_input(task)?;
                        self.inputs.push(input.unwrap_or_default());
                        let grant = package.map(|(name, reference)| SkillGrant {
                            name: name.into(),
                            reference,
                        });
                        let sensitive = attributes_from_json(&json!({ "content": output }));
                        self.d.skill_done(task, output, grant, vec![], sensitive)?
                    }
                    Op::Agent => {
                        let plan = self.d.agent_plan(task)?;
                        let prompt = plan.prompt().to_string();
                        let skills = plan.skills().iter().map(|s| s.reference).collect();
                        let record = (
                            prompt.clone(),
                            plan.system(),
                            plan.follow_ups().to_vec(),
                            skills,
                        );
                        self.plans.push(record);
                        assert!(self.d.scheduler().request(task));
                        self.d.scheduler().release();
                        let text = format!("[{prompt}]");
                        self.d.agent_done(task, &text, &text)?
                    }
                    Op::Done => {
                        let out = self.d.finish(task);
                        self.collect();
                        return out;
                    }
                    Op::Error => {
                        let error = self.d.take_error(task)?;
                        self.collect();
                        return Err(error);
                    }
                    other => panic!("unexpected {other:?}"),
                };
            }
        }
    }
}
