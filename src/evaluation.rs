//! `NativeEvaluation`: one evaluation domain, driven synchronously from the JS thread.
//! Steps are returned as packed integers (see `aml_engine::Step::encode`) so the hot path
//! crosses the boundary with numbers and short strings only.

use aml_engine::{Domain, Limits, NodeKind, Policy, SpanFailure, PRIMITIVES};
use napi::Result;
use napi_derive::napi;

use crate::guard::{engine_error, guard};

#[napi]
pub struct NativeEvaluation {
    domain: Domain,
}

fn kind_of(code: i32) -> NodeKind {
    if code < 0 {
        NodeKind::Component
    } else {
        NodeKind::Primitive(code as u8)
    }
}

#[napi]
impl NativeEvaluation {
    /// Limits in the order maxAgentCalls, maxConcurrentAgents, maxDepth, maxTurnsPerAgent,
    /// maxStateTransitions (already validated by the facade).
    /// `allowed_tools` is the runtime allowlist (`null`: unrestricted); `system` the runtime
    /// `system` option.
    #[napi(constructor)]
    pub fn new(
        limits: Vec<f64>,
        allowed_tools: Option<Vec<String>>,
        system: String,
    ) -> Result<Self> {
        guard(|| {
            let at = |i: usize, d: u64| limits.get(i).map(|v| *v as u64).unwrap_or(d);
            let def = Limits::default();
            Ok(NativeEvaluation {
                domain: Domain::with_policy(
                    Limits {
                        max_agent_calls: at(0, def.max_agent_calls),
                        max_concurrent_agents: at(1, def.max_concurrent_agents),
                        max_depth: at(2, def.max_depth),
                        max_turns_per_agent: at(3, def.max_turns_per_agent),
                        max_state_transitions: at(4, def.max_state_transitions),
                    },
                    Policy {
                        allowed_tools,
                        system,
                    },
                ),
            })
        })
    }

    #[napi]
    pub fn set_tracing(&mut self, enabled: bool) -> Result<()> {
        guard(|| {
            self.domain.set_tracing(enabled);
            Ok(())
        })
    }

    /// Pending trace records as a JSON array (empty when tracing is off).
    #[napi]
    pub fn drain_trace(&mut self) -> Result<String> {
        guard(|| {
            let records = self.domain.drain_trace();
            serde_json::to_string(&records).map_err(|e| napi::Error::from_reason(e.to_string()))
        })
    }

    #[napi]
    pub fn open_root(&mut self) -> Result<()> {
        guard(|| {
            self.domain.open_root();
            Ok(())
        })
    }

    #[napi]
    pub fn close_root(
        &mut self,
        error_type: Option<String>,
        message: Option<String>,
    ) -> Result<()> {
        guard(|| {
            let failure = error_type.map(|error_type| SpanFailure {
                error_type,
                message: message.unwrap_or_default(),
            });
            self.domain.close_root(failure);
            Ok(())
        })
    }

    /// Starts a task; `parent` is the task whose active component calls `evaluate()`.
    #[napi]
    pub fn new_task(&mut self, parent: Option<u32>) -> Result<u32> {
        guard(|| self.domain.new_task(parent).map_err(engine_error))
    }

    #[napi]
    pub fn text(&mut self, task: u32, text: String) -> Result<u32> {
        guard(|| {
            self.domain
                .text(task, &text)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn empty(&mut self, task: u32) -> Result<u32> {
        guard(|| {
            self.domain
                .empty(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn array(&mut self, task: u32, identity: u32, len: u32) -> Result<u32> {
        guard(|| {
            self.domain
                .array(task, identity, len)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    /// `kind` is -1 for a function component, else the primitive's code.
    #[napi]
    pub fn node(&mut self, task: u32, identity: u32, kind: i32, name: String) -> Result<u32> {
        guard(|| {
            self.domain
                .node(task, identity, kind_of(kind), &name)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn invalid(&mut self, task: u32, type_name: String) -> Result<u32> {
        guard(|| {
            self.domain
                .invalid(task, &type_name)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn unknown_element(&mut self, task: u32) -> Result<u32> {
        guard(|| {
            self.domain
                .unknown_element(task)
                .map(|s| s.encode())
                .map_err(engine_error)
        })
    }

    /// The span id enclosing the task's next value, e.g. `trace-3`.
    #[napi]
    pub fn current_span(&mut self, task: u32) -> Result<String> {
        guard(|| {
            self.domain
                .current_span(task)
                .map(|s| s.to_string())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn fail(&mut self, task: u32, error_type: String, message: String) -> Result<()> {
        guard(|| {
            self.domain
                .fail(
                    task,
                    SpanFailure {
                        error_type,
                        message,
                    },
                )
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn finish(&mut self, task: u32) -> Result<String> {
        guard(|| self.domain.finish(task).map_err(engine_error))
    }

    /// The message of the engine error that ended `task` (always an `EvaluationError`).
    #[napi]
    pub fn take_error(&mut self, task: u32) -> Result<String> {
        guard(|| {
            self.domain
                .take_error(task)
                .map(|e| e.to_string())
                .map_err(engine_error)
        })
    }

    #[napi]
    pub fn set_structured(&mut self, task: u32) -> Result<()> {
        guard(|| self.domain.set_structured(task).map_err(engine_error))
    }

    #[napi]
    pub fn live_tasks(&self) -> u32 {
        self.domain.live_tasks() as u32
    }
}

/// Deliberately panics inside the guard. Exists so the test suite can prove that a Rust
/// panic reaches JS as a rejected promise instead of aborting Node.
#[napi]
pub fn panic_for_test(message: String) -> Result<()> {
    guard(|| panic!("{message}"))
}

impl NativeEvaluation {
    pub(crate) fn domain(&mut self) -> &mut Domain {
        &mut self.domain
    }
}

/// The primitive kinds in code order: `[kind, label]` pairs. The facade builds its marker
/// table from this, so the engine stays the single source of truth.
#[napi]
pub fn primitive_kinds() -> Vec<Vec<String>> {
    PRIMITIVES
        .iter()
        .map(|(kind, label)| vec![kind.to_string(), label.to_string()])
        .collect()
}
