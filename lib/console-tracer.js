export function createConsoleTracer() {
  throw new Error("createConsoleTracer: in progress")
}
