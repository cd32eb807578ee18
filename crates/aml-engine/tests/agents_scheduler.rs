//! The Agent protocol in the engine (INVENTORY AG-1..AG-4, LIM-1, §2.3/§2.4), part 4: the
//! scheduler — slots held only around provider calls, FIFO queueing behind
//! `maxConcurrentAgents`, draining on abort, one scheduler per domain.

mod common;

use aml_engine::Limits;
use common::*;

#[test]
fn slots_are_held_only_for_the_provider_call_so_nesting_never_waits() {
    // `drive` asserts every request is granted at once; with one slot a deep tree of
    // nested Agents and nested tasks still completes.
    let mut run = Run::new(Limits {
        max_concurrent_agents: 1,
        ..limits()
    });
    let caller = comp("Caller", |ctx| {
        let a = ctx.evaluate(agent(agent(text("a")))).unwrap();
        text(&a)
    });
    let tree = agent(arr(vec![
        agent(arr(vec![agent(text("x")), system(agent(text("s")))])),
        caller,
        follow_up(agent(text("f"))),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[[[x]][[a]]]");
    assert_eq!(run.max_active, 1);
    assert_eq!(run.plans.len(), 7);
    assert_eq!(run.d.scheduler().active(), 0);
}

/// Drives `root` as a fresh root task until its Agent is ready.
fn paused(run: &mut Run, root: V) -> Driver {
    let task = run.d.new_task(None).unwrap();
    let mut drv = run.start(task, root);
    assert_eq!(run.resume(&mut drv).unwrap(), Paused::Agent);
    drv
}

#[test]
fn ready_agents_queue_fifo_behind_the_bound() {
    let mut run = Run::new(Limits {
        max_concurrent_agents: 2,
        ..limits()
    });
    let mut drivers: Vec<Driver> = ["a", "b", "c", "d"]
        .iter()
        .map(|p| paused(&mut run, agent(text(p))))
        .collect();
    let tasks: Vec<_> = drivers.iter().map(|d| d.task).collect();
    let spans: Vec<String> = tasks.iter().map(|&t| run.plan(t).span).collect();
    assert_eq!(spans, ["span-1", "span-2", "span-3", "span-4"]);
    // Ready order: a, b run; c, d wait in that order.
    let s = run.d.scheduler();
    assert!(s.request(tasks[0]));
    assert!(s.request(tasks[1]));
    assert!(!s.request(tasks[2]));
    assert!(!s.request(tasks[3]));
    assert_eq!(s.queued(), 2);
    assert_eq!(s.active(), 2);
    // b finishes first: its slot passes to c (FIFO), not to d.
    run.complete_agent(&mut drivers[1], "B");
    assert_eq!(
        run.resume(&mut drivers[1]).unwrap(),
        Paused::Done("B".into())
    );
    assert_eq!(run.d.scheduler().release(), Some(tasks[2]));
    assert_eq!(run.d.scheduler().active(), 2);
    for i in [0, 2] {
        run.complete_agent(&mut drivers[i], "x");
        run.resume(&mut drivers[i]).unwrap();
    }
    assert_eq!(run.d.scheduler().release(), Some(tasks[3]));
    assert_eq!(run.d.scheduler().release(), None);
    run.complete_agent(&mut drivers[3], "D");
    assert_eq!(
        run.resume(&mut drivers[3]).unwrap(),
        Paused::Done("D".into())
    );
    assert_eq!(run.d.scheduler().release(), None);
    assert_eq!(run.d.scheduler().active(), 0);
    assert_eq!(run.d.live_tasks(), 0);
}

#[test]
fn the_bound_comes_from_max_concurrent_agents_and_zero_is_unlimited() {
    for (max, granted) in [(1u64, 1usize), (3, 3), (4, 4), (0, 10)] {
        let mut run = Run::new(Limits {
            max_concurrent_agents: max,
            ..limits()
        });
        let drivers: Vec<Driver> = (0..10)
            .map(|i| paused(&mut run, agent(text(&i.to_string()))))
            .collect();
        let results: Vec<bool> = drivers
            .iter()
            .map(|d| run.d.scheduler().request(d.task))
            .collect();
        assert_eq!(results.iter().filter(|r| **r).count(), granted, "max {max}");
        assert!(results[..granted].iter().all(|r| *r));
    }
    // The default is 4.
    assert_eq!(Limits::default().max_concurrent_agents, 4);
}

#[test]
fn abort_drains_the_queue_in_order_and_leaves_it_empty() {
    let mut run = Run::new(Limits {
        max_concurrent_agents: 1,
        ..limits()
    });
    let drivers: Vec<Driver> = (0..4)
        .map(|i| paused(&mut run, agent(text(&i.to_string()))))
        .collect();
    for d in &drivers {
        run.d.scheduler().request(d.task);
    }
    let queued: Vec<_> = drivers[1..].iter().map(|d| d.task).collect();
    assert_eq!(run.d.scheduler().drain(), queued);
    assert_eq!(run.d.scheduler().queued(), 0);
    // The queued tasks fail (cancelled before provider execution); the running one
    // finishes, and its release hands the slot to nobody.
    for d in &drivers[1..] {
        run.fail(d.task, "cancelled before provider execution");
    }
    assert_eq!(run.d.scheduler().release(), None);
    assert_eq!(run.d.scheduler().active(), 0);
    // A withdrawn task is not handed a slot either.
    let mut s = aml_engine::Scheduler::new(1);
    assert!(s.request(1));
    assert!(!s.request(2));
    assert!(!s.request(3));
    assert!(s.withdraw(2));
    assert!(!s.withdraw(2));
    assert_eq!(s.release(), Some(3));
}

#[test]
fn each_domain_has_its_own_scheduler() {
    let one = Limits {
        max_concurrent_agents: 1,
        ..limits()
    };
    let mut first = Run::new(one);
    let mut second = Run::new(one);
    let a = paused(&mut first, agent(text("a")));
    let b = paused(&mut second, agent(text("b")));
    assert!(first.d.scheduler().request(a.task));
    assert!(second.d.scheduler().request(b.task));
    // Within one domain the second request waits.
    let c = paused(&mut first, agent(text("c")));
    assert!(!first.d.scheduler().request(c.task));
}
