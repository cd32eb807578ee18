//! `<Mcp>` grants in the engine (INVENTORY MCP-2, RT-1 allowedMcpServers, §2.3/§2.4): placement,
//! the allowlist, duplicates across named and configured servers, scoping to the nearest
//! Agent, the plan's grants, `capability.mcp` point events and the `mcpServers` attribute.

mod common;

use aml_engine::{EvalError, Limits, McpKind, Policy, Primitive};
use common::*;
use serde_json::{json, Value};

use McpKind::{Named, Stdio, StreamableHttp};

fn engine(e: EvalError) -> Result<String, Failure> {
    Err(Failure::Engine(e))
}

fn allowing(names: &[&str]) -> Policy {
    Policy {
        allowed_mcp_servers: Some(names.iter().map(|n| n.to_string()).collect()),
        ..Policy::default()
    }
}

fn points<'a>(records: &'a [Value], name: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| r["type"] == "event" && r["name"] == name)
        .collect()
}

#[test]
fn error_messages_are_the_documented_text() {
    let cases = [
        (
            EvalError::OnlyInsideAgent("Mcp"),
            "<Mcp> is only valid inside <Agent>",
        ),
        (
            EvalError::InvalidInsideFollowUp("Mcp"),
            "<Mcp> is invalid inside <FollowUp>",
        ),
        (
            EvalError::DuplicateMcpServer("docs".into()),
            "Agent declares duplicate MCP server \"docs\"",
        ),
        (
            EvalError::McpServerNotAllowed("docs".into()),
            "MCP server \"docs\" is not allowed by this runtime",
        ),
    ];
    for (error, message) in cases {
        assert_eq!(error.to_string(), message);
        assert_eq!(error.js_name(), "EvaluationError");
    }
}

#[test]
fn kinds_round_trip_through_their_trace_names() {
    for (kind, name) in [
        (Named, "named"),
        (Stdio, "stdio"),
        (StreamableHttp, "streamable-http"),
    ] {
        assert_eq!(kind.as_str(), name);
        assert_eq!(McpKind::parse(name), Some(kind));
    }
    assert_eq!(McpKind::parse("sse"), None);
}

#[test]
fn placement_errors() {
    let cases = [
        (mcp("m", Named, 0), EvalError::OnlyInsideAgent("Mcp")),
        (
            agent(system(mcp("m", Stdio, 0))),
            EvalError::OnlyInsideAgent("Mcp"),
        ),
        (
            agent(arr(vec![text("p"), follow_up(mcp("m", Named, 0))])),
            EvalError::InvalidInsideFollowUp("Mcp"),
        ),
        (
            comp("App", |_| mcp("m", StreamableHttp, 0)),
            EvalError::OnlyInsideAgent("Mcp"),
        ),
    ];
    for (tree, error) in cases {
        let mut run = Run::new(Limits::default());
        assert_eq!(run.eval(tree), engine(error));
        assert!(run.plans.is_empty(), "no provider runs after a grant error");
    }
}

#[test]
fn grants_reach_the_agent_through_components_and_lexical_wrappers() {
    let mut run = Run::new(Limits::default());
    let tree = agent(arr(vec![
        comp("Caps", |_| mcp("docs", StreamableHttp, 0)),
        wrapper(Primitive::Sandbox, mcp("git", Named, 1)),
        text("Inspect."),
    ]));
    assert_eq!(run.eval(tree).unwrap(), "[Inspect.]");
    assert_eq!(
        run.plans[0].mcp,
        [("docs".into(), StreamableHttp, 0), ("git".into(), Named, 1)]
    );
}

#[test]
fn duplicates_share_one_namespace_across_named_and_configured_servers() {
    for (first, second) in [
        (mcp("docs", Named, 0), mcp("docs", Named, 1)),
        (mcp("docs", Named, 0), mcp("docs", Stdio, 1)),
        (
            mcp("docs", StreamableHttp, 0),
            mcp("docs", StreamableHttp, 1),
        ),
    ] {
        let mut run = Run::new(Limits::default());
        assert_eq!(
            run.eval(agent(arr(vec![first, second, text("p")]))),
            engine(EvalError::DuplicateMcpServer("docs".into()))
        );
        assert!(run.plans.is_empty());
    }
    // A Tool and an MCP server may share a name: they are different capabilities.
    let mut run = Run::new(Limits::default());
    run.eval(agent(arr(vec![tool("docs", 0), mcp("docs", Named, 0)])))
        .unwrap();
    assert_eq!(run.plans[0].tools.len(), 1);
    assert_eq!(run.plans[0].mcp.len(), 1);
}

#[test]
fn the_allowlist_admits_listed_names_only() {
    let mut run = Run::with_policy(Limits::default(), allowing(&["docs"]));
    assert_eq!(
        run.eval(agent(arr(vec![
            mcp("docs", Stdio, 0),
            mcp("git", Named, 1)
        ]))),
        engine(EvalError::McpServerNotAllowed("git".into()))
    );
    assert!(run.plans.is_empty());
    let mut run = Run::with_policy(Limits::default(), allowing(&[]));
    assert_eq!(
        run.eval(agent(mcp("docs", Named, 0))),
        engine(EvalError::McpServerNotAllowed("docs".into()))
    );
    // The Tool allowlist does not restrict MCP servers, nor the other way round.
    let policy = Policy {
        allowed_tools: Some(vec![]),
        ..allowing(&["docs"])
    };
    let mut run = Run::with_policy(Limits::default(), policy);
    assert_eq!(run.eval(agent(mcp("docs", Named, 0))).unwrap(), "[]");
    assert_eq!(
        run.eval(agent(tool("docs", 0))),
        engine(EvalError::ToolNotAllowed("docs".into()))
    );
}

#[test]
fn checks_run_placement_then_allowlist_then_duplicates() {
    let mut run = Run::with_policy(Limits::default(), allowing(&["docs"]));
    assert_eq!(
        run.eval(mcp("git", Named, 0)),
        engine(EvalError::OnlyInsideAgent("Mcp"))
    );
    let mut run = Run::with_policy(Limits::default(), allowing(&["docs"]));
    assert_eq!(
        run.eval(agent(arr(vec![mcp("git", Named, 0), mcp("git", Named, 1)]))),
        engine(EvalError::McpServerNotAllowed("git".into()))
    );
}

#[test]
fn grants_belong_to_the_nearest_agent_only() {
    let mut run = Run::new(Limits::default());
    let tree = arr(vec![
        agent(arr(vec![
            mcp("outer", Named, 0),
            agent(arr(vec![mcp("inner", Stdio, 1), text("child")])),
            text("parent"),
        ])),
        agent(text("sibling")),
    ]);
    run.eval(tree).unwrap();
    let by_prompt: Vec<(&str, Vec<&str>)> = run
        .plans
        .iter()
        .map(|p| {
            let names = p.mcp.iter().map(|m| m.0.as_str()).collect();
            (p.prompt.as_str(), names)
        })
        .collect();
    assert_eq!(
        by_prompt,
        [
            ("child", vec!["inner"]),
            ("[child]parent", vec!["outer"]),
            ("sibling", vec![]),
        ]
    );
    // Names are unique per Agent, not per evaluation.
    let mut run = Run::new(Limits::default());
    let tree = agent(arr(vec![
        mcp("docs", Named, 0),
        agent(mcp("docs", Named, 1)),
    ]));
    assert!(run.eval(tree).is_ok());
}

#[test]
fn capability_mcp_events_follow_the_tool_events_at_plan_time() {
    let mut run = Run::traced(Limits::default());
    let tree = agent(arr(vec![
        mcp("docs", StreamableHttp, 0),
        tool("search", 0),
        mcp("local", Stdio, 1),
        mcp("git", Named, 2),
        text("p"),
    ]));
    let task = run.d.new_task(None).unwrap();
    let mut drv = run.start(task, tree);
    assert_eq!(run.resume(&mut drv).unwrap(), Paused::Agent);
    // Before the provider runs, every capability event is already out, tools first.
    let names: Vec<&str> = run
        .records
        .iter()
        .filter(|r| r["type"] == "event")
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "capability.tool",
            "capability.mcp",
            "capability.mcp",
            "capability.mcp"
        ]
    );
    let mcp_events = points(&run.records, "capability.mcp");
    let attributes: Vec<&Value> = mcp_events.iter().map(|r| &r["attributes"]).collect();
    assert_eq!(
        attributes,
        [
            &json!({"kind": "streamable-http", "name": "docs"}),
            &json!({"kind": "stdio", "name": "local"}),
            &json!({"kind": "named", "name": "git"}),
        ]
    );
    for event in &mcp_events {
        assert_eq!(event["spanId"], "span-1");
        assert_eq!(event["parentSpanId"], "trace-0");
        assert_eq!(event["sensitive"], json!({}));
    }
    run.complete_agent(&mut drv, "done");
    assert_eq!(run.resume(&mut drv).unwrap(), Paused::Done("done".into()));
    let end = run
        .records
        .iter()
        .find(|r| r["type"] == "span.end" && r["kind"] == "agent")
        .unwrap();
    assert_eq!(
        end["attributes"],
        json!({"provider": "p", "tools": 1.0, "mcpServers": 3.0, "turns": 1.0})
    );
}

#[test]
fn a_failed_plan_emits_no_capability_events() {
    let mut run = Run::traced(Limits {
        max_agent_calls: 1,
        ..Limits::default()
    });
    let tree = arr(vec![
        agent(text("first")),
        agent(arr(vec![mcp("docs", Named, 0), text("second")])),
    ]);
    assert!(run.eval(tree).is_err());
    assert!(points(&run.records, "capability.mcp").is_empty());
}
