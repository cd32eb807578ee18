// AML Studio's page (docs/STUDIO.md). Plain DOM: every text from a run (names, prompts,
// answers, attributes, errors) reaches the page through textContent or JSON.stringify into
// textContent, never through markup, so it is escaped by construction.
"use strict"

const token = new URLSearchParams(location.search).get("token") ?? ""
const main = document.getElementById("main")
const where = document.getElementById("where")
let timer

async function api(path, init) {
  const response = await fetch(path, { ...init, headers: { "x-aml-token": token } })
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`)
  return response.json()
}

function el(tag, props, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(props ?? {})) {
    if (key === "text") node.textContent = value
    else if (key === "class") node.className = value
    // Through CSSOM: the CSP forbids style attributes, not style properties set by script.
    else if (key === "style") Object.assign(node.style, value)
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, value)
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child)
  return node
}

const ms = (value) => (typeof value === "number" ? `${Math.round(value * 10) / 10} ms` : "")

// --- usage: one normalization (structured object, or ACP's legacy JSON string) -----------
const USAGE_FIELDS = ["inputTokens", "outputTokens", "totalTokens", "cachedInputTokens", "reasoningTokens"]

/** `{ inputTokens?, outputTokens?, totalTokens?, cachedInputTokens?, reasoningTokens? }` or undefined. */
function normalizeUsage(value) {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value)
    } catch {
      return undefined
    }
  }
  if (typeof value !== "object" || value === null) return undefined
  const usage = {}
  for (const field of USAGE_FIELDS) if (typeof value[field] === "number") usage[field] = value[field]
  return Object.keys(usage).length === 0 ? undefined : usage
}

function addUsage(total, usage) {
  if (usage === undefined) return total
  const sum = { ...(total ?? {}) }
  for (const field of USAGE_FIELDS) if (usage[field] !== undefined) sum[field] = (sum[field] ?? 0) + usage[field]
  return sum
}

const usageText = (usage) => (usage === undefined ? "" : `${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out tokens`)

// --- the run model: spans from the recorded trace records --------------------------------
class RunModel {
  constructor() {
    this.spans = new Map()
    this.roots = []
  }

  apply(record) {
    const type = record[0]
    if (type === 0) {
      const [, id, parent, kind, name, at, attributes, sensitive] = record
      const span = { id, parent, kind, name, at, attributes: { ...attributes, ...sensitive }, events: [], children: [] }
      this.spans.set(id, span)
      const owner = parent === null ? undefined : this.spans.get(parent)
      if (owner === undefined) this.roots.push(span)
      else owner.children.push(span)
    } else if (type === 1) {
      const span = this.spans.get(record[1])
      if (span === undefined) return
      span.failed = record[3]
      span.durationMs = record[4]
      span.endAttributes = { ...record[5], ...record[6] }
    } else if (type === 2) {
      const span = this.spans.get(record[1])
      if (span !== undefined) span.events.push({ name: record[2], at: record[3], attributes: { ...record[4], ...record[5] } })
    }
  }

  /** The span's own usage: its end attributes' `usage`, else its turn events'. */
  ownUsage(span) {
    const direct = normalizeUsage(span.endAttributes?.usage)
    if (direct !== undefined) return direct
    let sum
    for (const name of ["agent.turn", "acp.session.prompt.completed"]) {
      for (const event of span.events) if (event.name === name) sum = addUsage(sum, normalizeUsage(event.attributes.usage))
      if (sum !== undefined) return sum
    }
    return undefined
  }

  subtreeUsage(span) {
    let sum = this.ownUsage(span)
    for (const child of span.children) sum = addUsage(sum, this.subtreeUsage(child))
    return sum
  }

  stepKey(span) {
    return span.events.find((event) => event.name === "journal.step")?.attributes.key
  }

  bounds() {
    let start = Infinity
    let end = -Infinity
    for (const span of this.spans.values()) {
      start = Math.min(start, span.at)
      end = Math.max(end, span.at + (span.durationMs ?? 0))
    }
    return start === Infinity ? [0, 1] : [start, Math.max(end, start + 1)]
  }
}

// --- run list ----------------------------------------------------------------------------
async function showList() {
  where.textContent = "runs"
  const runs = await api("/api/runs")
  const rows = runs.map((run) =>
    el(
      "tr",
      { class: "run-row", "data-run": run.id, onclick: () => (location.hash = `run=${run.id}`) },
      el("td", { class: "run-id", text: run.id }),
      el("td", { class: `status status-${run.status}`, text: run.status }),
      el("td", { text: new Date(run.startedAt).toLocaleString() }),
      el("td", { text: ms(run.durationMs) }),
      el("td", { class: "count-agent", text: String(run.counts?.agent ?? "") }),
      el("td", { text: String(run.counts?.tool ?? "") }),
      el("td", { text: String(run.counts?.script ?? "") }),
      el("td", { class: "error-kind", text: run.error?.kind ?? "" }),
      el("td", { text: run.rerunOf === undefined ? "" : `from ${run.rerunOf}` }),
    ),
  )
  const head = el("tr", {}, ...["run", "status", "started", "duration", "Agents", "Tools", "Scripts", "error", "re-run of"].map((h) => el("th", { text: h })))
  main.replaceChildren(runs.length === 0 ? el("p", { class: "note", text: "No recorded runs yet: aml run <workflow> records one." }) : el("table", { class: "runs" }, head, ...rows))
  timer = setTimeout(route, 1000)
}

// --- one run: tree + timeline side by side, details on the right ---------------------------
async function showRun(id) {
  where.textContent = `run ${id}`
  const model = new RunModel()
  const collapsed = new Set()
  let offset = 0
  let selected
  let meta
  const rows = el("div", { class: "rows" })
  const details = el("div", { class: "details" }, el("p", { class: "note", text: "Select a node." }))
  const summary = el("div", { class: "summary" })
  main.replaceChildren(summary, el("div", { class: "run" }, rows, details))

  function render() {
    const [start, end] = model.bounds()
    const scale = 100 / (end - start)
    const out = []
    const visit = (span, depth) => {
      const usage = model.subtreeUsage(span)
      const open = span.durationMs === undefined
      const toggle = el("button", { class: "toggle", text: span.children.length === 0 ? "" : collapsed.has(span.id) ? "▸" : "▾" })
      toggle.addEventListener("click", (event) => {
        event.stopPropagation()
        if (collapsed.has(span.id)) collapsed.delete(span.id)
        else collapsed.add(span.id)
        render()
      })
      const label = el(
        "div",
        { class: "label", style: { paddingLeft: `${depth * 14 + 4}px` } },
        toggle,
        el("span", { class: "kind", text: span.kind }),
        el("span", { class: "name", text: span.name }),
        el("span", { class: "usage", text: usageText(usage) }),
      )
      const bar = el("div", {
        class: `bar${span.failed ? " failed" : ""}${open ? " open" : ""}`,
        style: { left: `${(span.at - start) * scale}%`, width: `${((open ? end : span.at + span.durationMs) - span.at) * scale}%` },
        title: ms(span.durationMs),
      })
      const row = el("div", { class: `node${selected === span.id ? " selected" : ""}`, "data-kind": span.kind, "data-name": span.name, "data-span": span.id }, label, el("div", { class: "track" }, bar))
      row.addEventListener("click", () => {
        selected = span.id
        render()
      })
      out.push(row)
      if (!collapsed.has(span.id)) for (const child of span.children) visit(child, depth + 1)
    }
    for (const root of model.roots) visit(root, 0)
    rows.replaceChildren(...out)
    summary.replaceChildren(
      el("span", { class: `status status-${meta.status}`, text: meta.status }),
      " ",
      el("span", { text: `${meta.workflow ?? ""} · ${ms(meta.durationMs)} · ${model.spans.size} spans` }),
      meta.rerunOf === undefined ? "" : el("span", { text: ` · re-run of ${meta.rerunOf} from ${meta.from}` }),
      meta.truncated ? el("span", { class: "note", text: " · record truncated at its size cap" }) : "",
    )
    if (selected !== undefined && model.spans.has(selected)) showDetails(model.spans.get(selected))
  }

  function showDetails(span) {
    const parts = [el("h3", { text: `${span.kind} ${span.name}` })]
    parts.push(el("p", { text: `status: ${span.durationMs === undefined ? "running" : span.failed ? "failed" : "ok"} · duration: ${ms(span.durationMs)}` }))
    const own = model.ownUsage(span)
    const subtree = model.subtreeUsage(span)
    if (own !== undefined) parts.push(el("p", { class: "usage-own", text: `usage: ${JSON.stringify(own)}` }))
    if (subtree !== undefined) parts.push(el("p", { class: "usage-subtree", text: `subtree usage: ${JSON.stringify(subtree)}` }))
    if (span.failed && !span.children.some((child) => child.failed) && meta.error !== undefined) {
      parts.push(
        el("div", { class: "error-box" }, el("strong", { class: "error-kind", text: meta.error.kind }), el("span", { text: ` · retryable: ${meta.error.retryable}` }), el("pre", { class: "error-message", text: meta.error.message })),
      )
    }
    const key = model.stepKey(span)
    if (key !== undefined) {
      const status = el("span", { class: "rerun-status" })
      const button = el("button", { class: "rerun", text: "Re-run from here" })
      button.addEventListener("click", async () => {
        button.disabled = true
        try {
          const started = await api(`/api/runs/${encodeURIComponent(id)}/rerun?step=${encodeURIComponent(key)}`, { method: "POST" })
          status.textContent = ` started (pid ${started.pid}); it appears in the run list`
        } catch (error) {
          status.textContent = ` ${error.message}`
        }
      })
      parts.push(el("div", {}, button, status))
    }
    parts.push(el("h4", { text: "attributes" }), el("pre", { class: "attributes", text: JSON.stringify({ ...span.attributes, ...span.endAttributes }, null, 2) }))
    if (span.events.length > 0) parts.push(el("h4", { text: "events" }), el("pre", { text: span.events.map((e) => `${e.name} ${JSON.stringify(e.attributes)}`).join("\n") }))
    details.replaceChildren(...parts)
  }

  async function poll() {
    if (!location.hash.endsWith(`run=${id}`)) return
    meta = await api(`/api/runs/${encodeURIComponent(id)}`)
    let changed = false
    for (;;) {
      const chunk = await api(`/api/runs/${encodeURIComponent(id)}/events?offset=${offset}`)
      if (chunk.text === "") break
      // Each line is one recorded batch: a JSON array of records (docs/STUDIO.md).
      for (const line of chunk.text.split("\n")) if (line !== "") for (const record of JSON.parse(line)) model.apply(record)
      offset = chunk.next
      changed = true
    }
    if (changed || main.dataset.status !== meta.status) {
      main.dataset.status = meta.status
      render()
    }
    // A live run is polled until it ends (docs/STUDIO.md "Live runs": within a second).
    if (meta.status === "running") timer = setTimeout(poll, 300)
  }
  await poll()
}

function route() {
  clearTimeout(timer)
  const match = /^#run=(.+)$/.exec(location.hash)
  delete main.dataset.status
  const shown = match === null ? showList() : showRun(decodeURIComponent(match[1]))
  shown.catch((error) => main.replaceChildren(el("p", { class: "error-box", text: String(error.message) })))
}

document.getElementById("home").addEventListener("click", (event) => {
  event.preventDefault()
  location.hash = ""
})
addEventListener("hashchange", route)
route()
