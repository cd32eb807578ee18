//! The per-domain Agent scheduler (LIM-1): FIFO in ready order, at most
//! `maxConcurrentAgents` provider calls at once (`0` = unlimited). A slot is held for exactly
//! one provider call; post-order resolution never holds one, so nesting cannot deadlock.
//! Sans-IO: the driver asks for a slot, and on release is told which queued task to start.

use std::collections::VecDeque;

use crate::task::TaskId;

#[derive(Debug, Default)]
pub struct Scheduler {
    max: u64,
    active: u64,
    queue: VecDeque<TaskId>,
}

impl Scheduler {
    pub fn new(max: u64) -> Scheduler {
        Scheduler {
            max,
            active: 0,
            queue: VecDeque::new(),
        }
    }

    /// True when `task` may run now (it holds a slot); false when it was queued.
    pub fn request(&mut self, task: TaskId) -> bool {
        if self.max == 0 || self.active < self.max {
            self.active += 1;
            true
        } else {
            self.queue.push_back(task);
            false
        }
    }

    /// A provider call finished. The slot passes to the first queued task, if any.
    pub fn release(&mut self) -> Option<TaskId> {
        match self.queue.pop_front() {
            Some(next) => Some(next),
            None => {
                self.active = self.active.saturating_sub(1);
                None
            }
        }
    }

    /// Removes a queued task that will no longer run (its own cancellation).
    pub fn withdraw(&mut self, task: TaskId) -> bool {
        let before = self.queue.len();
        self.queue.retain(|t| *t != task);
        before != self.queue.len()
    }

    /// Abort: every queued task, in queue order; the queue is left empty.
    pub fn drain(&mut self) -> Vec<TaskId> {
        self.queue.drain(..).collect()
    }

    pub fn active(&self) -> u64 {
        self.active
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_with_a_bound_and_slot_hand_over() {
        let mut s = Scheduler::new(2);
        assert!(s.request(1));
        assert!(s.request(2));
        assert!(!s.request(3));
        assert!(!s.request(4));
        assert_eq!(s.release(), Some(3));
        assert_eq!(s.active(), 2);
        assert_eq!(s.release(), Some(4));
        assert_eq!(s.release(), None);
        assert_eq!(s.release(), None);
        assert_eq!(s.active(), 0);
    }

    #[test]
    fn zero_is_unlimited_and_drain_empties_the_queue() {
        let mut u = Scheduler::new(0);
        for t in 0..100 {
            assert!(u.request(t));
        }
        let mut s = Scheduler::new(1);
        assert!(s.request(1));
        assert!(!s.request(2));
        assert!(!s.request(3));
        assert!(s.withdraw(2));
        assert_eq!(s.drain(), vec![3]);
        assert_eq!(s.queued(), 0);
    }
}
