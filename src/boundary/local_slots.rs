//! Values of this JS thread addressed by small integer handles, a freed handle reused first
//! (ids stay small and dense). The evaluation domains (`registry.rs`) and the journal indexes
//! (`src/journal/index.rs`) live in one each, behind a `thread_local!` `RefCell`: the hot path
//! reaches them without a lock (why they are not `Handles<T>`: `handles.rs`).

pub struct LocalSlots<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for LocalSlots<T> {
    fn default() -> Self {
        LocalSlots {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> LocalSlots<T> {
    pub fn insert(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(value);
                id
            }
            None => {
                self.slots.push(Some(value));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Takes the value out and frees its handle; `None` for a free or unknown handle.
    pub fn remove(&mut self, id: u32) -> Option<T> {
        let value = self.slots.get_mut(id as usize)?.take()?;
        self.free.push(id);
        Some(value)
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        self.slots.get_mut(id as usize).and_then(Option::as_mut)
    }

    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
