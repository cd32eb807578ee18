// The lexical environment: what a subtree inherits from the scopes around it — Context
// bindings, the active Sandbox session, the Workspace materialization. Environments are
// immutable; a scope primitive derives a new one for its subtree, so concurrent branches and
// nested evaluate() calls can never see each other's bindings.

/** A Context binding chain link: `{ context, value, parent }`. */
class Binding {
  constructor(context, value, parent) {
    this.context = context
    this.value = value
    this.parent = parent
  }
}

export class Env {
  constructor(bindings, sandbox, workspace) {
    this.bindings = bindings
    this.sandbox = sandbox
    this.workspace = workspace
    Object.freeze(this)
  }

  withBinding(context, value) {
    return new Env(new Binding(context, value, this.bindings), this.sandbox, this.workspace)
  }

  withSandbox(sandbox) {
    return new Env(this.bindings, sandbox, this.workspace)
  }

  withWorkspace(workspace) {
    return new Env(this.bindings, this.sandbox, workspace)
  }

  /** The nearest binding of `context`, or undefined. */
  lookup(context) {
    for (let link = this.bindings; link !== null; link = link.parent) {
      if (link.context === context) return link
    }
    return undefined
  }
}

export const ROOT_ENV = new Env(null, undefined, undefined)
