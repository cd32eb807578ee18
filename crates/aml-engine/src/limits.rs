//! Per-evaluation budgets. `0` always means "no limit" (RT-1, LIM-1).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_agent_calls: u64,
    pub max_concurrent_agents: u64,
    pub max_depth: u64,
    pub max_turns_per_agent: u64,
    pub max_state_transitions: u64,
    /// Reported tokens the evaluation may spend (issue 37); off (0) by default.
    pub max_tokens: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_agent_calls: 32,
            max_concurrent_agents: 4,
            max_depth: 16,
            max_turns_per_agent: 16,
            max_state_transitions: 16,
            max_tokens: 0,
        }
    }
}

impl Limits {
    /// True when entering a node at `depth` (1-based) stays within `max_depth`.
    pub fn depth_allows(&self, depth: u64) -> bool {
        self.max_depth == 0 || depth <= self.max_depth
    }
}
