//! What the machine asks the driver to do next.
//!
//! A step is deliberately tiny so it can cross the JS boundary as one small integer:
//! `op | trace_pending << 4 | height << 5`. `height` is the number of frames left on the
//! task's stack after the step; the driver truncates its mirror stack of JS objects to it,
//! which is how pops are communicated without a call per pop.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Op {
    /// The task's value is complete; take its output.
    Done = 0,
    /// Read the next element of the array on top of the stack and feed it.
    Read = 1,
    /// Invoke the function component on top of the stack and feed its result.
    Invoke = 2,
    /// The node on top is a built-in primitive; the driver runs its protocol.
    Primitive = 3,
    /// The engine rejected the value; read the error, the task is gone.
    Error = 4,
    /// Feed the `children` of the primitive on top (Agent, System, FollowUp…).
    Children = 5,
    /// The Agent on top has a complete, validated plan: run its provider.
    Agent = 6,
    /// The scope on top finished its subtree: complete it (release, run, write), then call
    /// `scope_done`.
    Complete = 7,
    /// The Agent on top was entered inside a Sandbox and has a provider: the facade checks
    /// `provider.supportsSandbox(session)` now — after the children, before the turn and
    /// call budgets (INVENTORY AG-1) — then calls `agent_handshake_done`.
    Handshake = 8,
    /// A `<Loop>` render selected the Agent node on top: the facade keeps the node and its
    /// environment and calls `loop_park`; the rest of the render value is checked before the
    /// Agent runs (INVENTORY LP-1: selection precedes execution).
    Park = 9,
    /// The render value is checked and the parked Agent is the only one: the facade pushes
    /// the kept node back on its mirror stack and calls `loop_resume`.
    Resume = 10,
}

pub const TRACE_PENDING: u32 = 1 << 4;
const HEIGHT_SHIFT: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub op: Op,
    pub height: u32,
    pub trace_pending: bool,
}

impl Step {
    pub fn encode(self) -> u32 {
        let trace = if self.trace_pending { TRACE_PENDING } else { 0 };
        (self.op as u32) | trace | (self.height << HEIGHT_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_packs_op_flag_and_height() {
        let s = Step {
            op: Op::Invoke,
            height: 5,
            trace_pending: true,
        };
        assert_eq!(s.encode(), 2 | 16 | (5 << 5));
        let d = Step {
            op: Op::Done,
            height: 0,
            trace_pending: false,
        };
        assert_eq!(d.encode(), 0);
    }
}
