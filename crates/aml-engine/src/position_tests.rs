use crate::{AgentEntry, Domain, Limits, NodeKind, Op, Primitive};

fn agent_entry() -> AgentEntry {
    AgentEntry {
        has_provider: true,
        provider: Some("p".into()),
        ..AgentEntry::default()
    }
}

/// A journaled domain whose root task is inside the component `Fan`.
fn fan() -> (Domain, u32) {
    let mut d = Domain::new(Limits::default());
    d.enable_positions();
    d.open_root();
    let root = d.new_task(None).unwrap();
    d.node(root, 2, NodeKind::Component, "Fan").unwrap();
    (d, root)
}

#[test]
fn sibling_agents_have_distinct_stable_positions() {
    let mut positions = Vec::new();
    for _ in 0..2 {
        let mut d = Domain::new(Limits::default());
        d.open_root();
        let t = d.new_task(None).unwrap();
        d.array(t, 1, 2).unwrap();
        let mut run = Vec::new();
        for identity in [2, 3] {
            d.node(
                t,
                identity,
                NodeKind::Primitive(Primitive::Agent as u8),
                "Agent",
            )
            .unwrap();
            let step = d.enter_agent(t, agent_entry()).unwrap();
            assert!(step.is(Op::Children));
            run.push(d.position(t).unwrap());
            d.empty(t).unwrap();
            d.mark_replayed(t).unwrap();
            d.agent_done(t, "x", "").unwrap();
        }
        positions.push(run);
    }
    assert_ne!(positions[0][0], positions[0][1]);
    assert_eq!(positions[0], positions[1]);
}

/// The positions of the Agents of a root array of `len` Agents.
fn agent_positions(len: u32) -> Vec<String> {
    let mut d = Domain::new(Limits::default());
    d.open_root();
    let t = d.new_task(None).unwrap();
    d.array(t, 1, len).unwrap();
    let mut out = Vec::new();
    for identity in 0..len {
        d.node(
            t,
            10 + u64::from(identity),
            NodeKind::Primitive(Primitive::Agent as u8),
            "Agent",
        )
        .unwrap();
        d.enter_agent(t, agent_entry()).unwrap();
        out.push(d.position(t).unwrap());
        d.empty(t).unwrap();
        d.agent_done(t, "x", "").unwrap();
    }
    out
}

#[test]
fn nested_tasks_are_prefixed_by_their_origin_and_ordinal() {
    let (mut d, root) = fan();
    let first = d.new_task(Some(root)).unwrap();
    let second = d.new_task(Some(root)).unwrap();
    assert_eq!(d.position(first).unwrap(), "c.e0/");
    assert_eq!(d.position(second).unwrap(), "c.e1/");
    assert_eq!(d.tool_key(root).unwrap(), "tool:c.t0");
    assert_eq!(d.tool_key(root).unwrap(), "tool:c.t1");
    d.node(
        second,
        4,
        NodeKind::Primitive(Primitive::Agent as u8),
        "Agent",
    )
    .unwrap();
    d.enter_agent(second, agent_entry()).unwrap();
    assert_eq!(d.take_journal_step(second).unwrap().key, "agent:c.e1/A.");
}

#[test]
fn a_replayed_agent_completes_with_its_recorded_text() {
    let mut d = Domain::new(Limits::default());
    d.set_tracing(true);
    d.open_root();
    let t = d.new_task(None).unwrap();
    d.node(t, 2, NodeKind::Primitive(Primitive::Agent as u8), "Agent")
        .unwrap();
    d.enter_agent(t, agent_entry()).unwrap();
    d.text(t, "hi").unwrap();
    let step = d.empty(t);
    assert!(step.is_ok());
    let step = d.replay_agent(t, "agent:A.", "recorded").unwrap();
    assert!(step.is(Op::Done));
    assert_eq!(d.finish(t).unwrap(), "recorded");
    let records = format!("{:?}", d.drain_trace());
    assert!(records.contains("journal.replay"), "{records}");
    assert!(records.contains("journal.replayed"), "{records}");
}

#[test]
fn a_live_step_names_its_key_only_while_tracing() {
    for tracing in [true, false] {
        let mut d = Domain::new(Limits::default());
        d.set_tracing(tracing);
        d.open_root();
        let t = d.new_task(None).unwrap();
        d.node(t, 2, NodeKind::Primitive(Primitive::Agent as u8), "Agent")
            .unwrap();
        d.enter_agent(t, agent_entry()).unwrap();
        d.text(t, "hi").unwrap();
        assert!(d.empty(t).is_ok());
        d.note_live_step(t, "agent:A.").unwrap();
        let records = format!("{:?}", d.drain_trace());
        assert_eq!(records.contains("journal.step"), tracing, "{records}");
        assert_eq!(records.contains("agent:A."), tracing, "{records}");
    }
}

use crate::trace::tests::Kept;

type KeptRecords = std::rc::Rc<std::cell::RefCell<Vec<crate::TraceRecord>>>;

/// A traced domain with a keeping tap, its root open, its steps private or not.
fn tapped_domain(private: bool) -> (Domain, KeptRecords) {
    let kept = KeptRecords::default();
    let mut d = Domain::new(Limits::default());
    d.set_tracing(true);
    d.set_trace_tap(Some(Box::new(Kept(kept.clone()))));
    d.set_private_steps(private);
    d.open_root();
    (d, kept)
}

#[test]
fn private_steps_reach_the_tap_and_not_the_listeners() {
    for private in [true, false] {
        let (mut d, kept) = tapped_domain(private);
        let t = d.new_task(None).unwrap();
        d.node(t, 2, NodeKind::Primitive(Primitive::Agent as u8), "Agent")
            .unwrap();
        d.enter_agent(t, agent_entry()).unwrap();
        d.text(t, "hi").unwrap();
        assert!(d.empty(t).is_ok());
        d.note_live_step(t, "agent:A.").unwrap();
        let listened = format!("{:?}", d.drain_trace());
        let tapped = format!("{:?}", kept.borrow());
        assert!(tapped.contains("journal.step"), "{tapped}");
        assert_eq!(listened.contains("journal.step"), !private, "{listened}");
    }
}

#[test]
fn a_tool_call_step_point_names_its_kind_and_is_private_like_an_agents() {
    for private in [true, false] {
        let (mut d, kept) = tapped_domain(private);
        d.journal_span_point(
            crate::SpanId::Span(9),
            Some(crate::SpanId::ROOT),
            "journal.step",
            "tool:c.t0",
            "tool",
        );
        let listened = format!("{:?}", d.drain_trace());
        let tapped = format!("{:?}", kept.borrow());
        assert!(
            tapped.contains("tool:c.t0") && tapped.contains("\"tool\""),
            "{tapped}"
        );
        assert_eq!(listened.contains("tool:c.t0"), !private, "{listened}");
    }
}

#[test]
fn appending_a_sibling_keeps_earlier_positions() {
    let two = agent_positions(2);
    let three = agent_positions(3);
    assert_eq!(two[..], three[..2]);
}

#[test]
fn a_journal_step_keeps_the_agent_key_until_it_ends() {
    let (mut d, root) = fan();
    let t = d.new_task(Some(root)).unwrap();
    d.node(t, 4, NodeKind::Primitive(Primitive::Agent as u8), "Agent")
        .unwrap();
    d.enter_agent(t, agent_entry()).unwrap();
    let step = d.take_journal_step(t).unwrap();
    assert_eq!(step.key, "agent:c.e0/A.");
    assert!(!step.live);
    // Filed back without being marked live: nothing is pending.
    d.put_journal_step(t, step);
    assert!(d.journal_step(t).is_none());
    let mut step = d.take_journal_step(t).unwrap();
    step.digest = [7; 32];
    step.live = true;
    d.put_journal_step(t, step);
    let pending = d.journal_step(t).unwrap();
    assert_eq!(
        (pending.key.as_str(), pending.digest),
        ("agent:c.e0/A.", [7; 32])
    );
    d.end_journal_step(t);
    assert!(d.journal_step(t).is_none());
    assert!(d.take_journal_step(99).is_err());
}

#[test]
fn reused_position_tables_start_empty() {
    let (mut d, root) = fan();
    let first = d.new_task(Some(root)).unwrap();
    assert_eq!(d.position(first).unwrap(), "c.e0/");
    let mut step = d.take_journal_step(first).unwrap();
    step.live = true;
    d.put_journal_step(first, step);
    let spare = d.take_positions().unwrap();
    assert!(d.take_positions().is_none());

    let mut next = Domain::new(Limits::default());
    next.enable_positions_reusing(spare);
    next.open_root();
    let root = next.new_task(None).unwrap();
    next.node(root, 2, NodeKind::Component, "Fan").unwrap();
    // The ordinals start again, and nothing is pending.
    let first = next.new_task(Some(root)).unwrap();
    assert_eq!(next.position(first).unwrap(), "c.e0/");
    assert!(next.journal_step(first).is_none());
    assert!(next.journal_step(0).is_none());
}
