//! `<Workspace>` placement and the channel query used by `<File>` / `<Include>`
//! (INVENTORY WS-1 placement, INC-1). Driven directly through the Domain API: a node is fed,
//! the engine answers `Primitive`, and the test enters it the way the facade would.

use aml_engine::{
    AgentEntry, Channel, Domain, EvalError, Limits, NodeKind, Op, Primitive, ScopeEntry, SpanKind,
    TaskId,
};

struct Run {
    d: Domain,
    next: u32,
}

impl Run {
    fn new() -> Run {
        Run {
            d: Domain::new(Limits::default()),
            next: 1,
        }
    }

    fn node(&mut self, task: TaskId, p: Option<Primitive>) -> Op {
        self.next += 1;
        let kind = p.map_or(NodeKind::Component, |p| NodeKind::Primitive(p as u8));
        self.d
            .node(task, u64::from(self.next), kind, "")
            .unwrap()
            .op
    }

    /// Feeds `p` and enters it as the facade does, ready for its children.
    fn enter(&mut self, task: TaskId, p: Primitive) {
        assert_eq!(self.node(task, Some(p)), Op::Primitive);
        let step = match p {
            Primitive::Agent => self.d.enter_agent(
                task,
                AgentEntry {
                    has_provider: true,
                    ..AgentEntry::default()
                },
            ),
            Primitive::Context => self.d.enter_transparent(task),
            Primitive::System => self.d.enter_system(task),
            other => self.d.enter_scope(
                task,
                ScopeEntry {
                    kind: SpanKind::Sandbox,
                    name: other.label().into(),
                    resource: true,
                    attributes: vec![],
                    sensitive: vec![],
                    capture: other == Primitive::File,
                },
            ),
        };
        assert_eq!(step.unwrap().op, Op::Children);
    }

    fn claim(&mut self, task: TaskId) -> Result<(), EvalError> {
        assert_eq!(self.node(task, Some(Primitive::Workspace)), Op::Primitive);
        self.d.claim_workspace(task).unwrap()
    }
}

const NOT_TOP: Result<(), EvalError> = Err(EvalError::WorkspaceNotTopLevel);

#[test]
fn messages_are_the_documented_text() {
    assert_eq!(
        EvalError::SecondWorkspace.to_string(),
        "An AML evaluation may contain at most one <Workspace>"
    );
    assert_eq!(
        EvalError::WorkspaceNotTopLevel.to_string(),
        "<Workspace> must be a top-level resource boundary"
    );
}

#[test]
fn a_root_workspace_is_claimed_once_per_domain() {
    let mut run = Run::new();
    let task = run.d.new_task(None).unwrap();
    assert_eq!(run.claim(task), Ok(()));
    // A second one is reported as a second one, even where it would be misplaced anyway.
    let nested = run.d.new_task(Some(task)).unwrap();
    assert_eq!(run.claim(nested), Err(EvalError::SecondWorkspace));
}

#[test]
fn components_and_context_providers_keep_the_root_channel() {
    let mut run = Run::new();
    let task = run.d.new_task(None).unwrap();
    assert_eq!(run.node(task, None), Op::Invoke);
    run.enter(task, Primitive::Context);
    assert_eq!(run.claim(task), Ok(()));
}

#[test]
fn agents_scopes_and_private_inputs_are_not_top_level() {
    for outer in [
        Primitive::Agent,
        Primitive::Sandbox,
        Primitive::File,
        Primitive::Script,
        Primitive::Parallel,
    ] {
        let mut run = Run::new();
        let task = run.d.new_task(None).unwrap();
        run.enter(task, outer);
        assert_eq!(run.claim(task), NOT_TOP, "inside {outer:?}");
    }
}

#[test]
fn nested_tasks_inherit_whether_their_caller_was_top_level() {
    let mut run = Run::new();
    let task = run.d.new_task(None).unwrap();
    assert_eq!(run.node(task, None), Op::Invoke);
    let nested = run.d.new_task(Some(task)).unwrap();
    assert_eq!(run.claim(nested), Ok(()));

    let mut run = Run::new();
    let task = run.d.new_task(None).unwrap();
    run.enter(task, Primitive::Sandbox);
    assert_eq!(run.node(task, None), Op::Invoke);
    let inside = run.d.new_task(Some(task)).unwrap();
    // The nested task's own frames are empty, but its caller stood inside a Sandbox.
    assert_eq!(run.node(inside, None), Op::Invoke);
    let deeper = run.d.new_task(Some(inside)).unwrap();
    assert_eq!(run.claim(deeper), NOT_TOP);
}

#[test]
fn channel_names_where_a_primitive_writes() {
    let mut run = Run::new();
    let task = run.d.new_task(None).unwrap();
    assert_eq!(run.node(task, Some(Primitive::Include)), Op::Primitive);
    assert_eq!(run.d.channel(task).unwrap(), Channel::Root);

    let mut run = Run::new();
    let task = run.d.new_task(None).unwrap();
    run.enter(task, Primitive::Agent);
    run.enter(task, Primitive::Sandbox);
    assert_eq!(run.node(task, Some(Primitive::Include)), Op::Primitive);
    assert_eq!(run.d.channel(task).unwrap(), Channel::Agent);

    let mut run = Run::new();
    let task = run.d.new_task(None).unwrap();
    run.enter(task, Primitive::Agent);
    run.enter(task, Primitive::File);
    assert_eq!(run.node(task, Some(Primitive::Include)), Op::Primitive);
    assert_eq!(run.d.channel(task).unwrap(), Channel::Text);
}
