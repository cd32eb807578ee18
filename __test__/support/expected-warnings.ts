// Some specs provoke one of AML's own process warnings on purpose (forged journal entries, for
// one). Node prints every warning to stderr, so a green run would show them as if something
// were wrong. `quietWarnings(code)` swaps the listeners that print warnings for one that
// passes every other warning on unchanged and keeps the expected ones (they stay observable
// with `process.on("warning")`, which the specs that assert them use); the returned function
// puts the printers back.
export function quietWarnings(code: string): () => void {
  const printers = process.listeners("warning") as ((warning: Error) => void)[]
  const filtered = (warning: Error) => {
    if ((warning as NodeJS.ErrnoException).code === code) return
    for (const print of printers) print(warning)
  }
  for (const print of printers) process.removeListener("warning", print)
  process.on("warning", filtered)
  return () => {
    process.removeListener("warning", filtered)
    for (const print of printers) process.on("warning", print)
  }
}
