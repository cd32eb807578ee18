// Quick start: function components, an async component and component-local evaluate().
//
//   npx tsx examples/quick-start.tsx
//
// No Agent is involved, so no provider is needed: the tree resolves to plain text.

import { AmlRuntime, evaluate, type AmlRenderable } from "@aml-jsx/sdk"

/** A synchronous component: returns a string. */
function Greeting(props: { name: string }) {
  return `Hello, ${props.name}!`
}

/** An async component: awaits something, then returns more AML to evaluate. */
async function Facts(props: { topics: readonly string[] }) {
  await new Promise((resolve) => setTimeout(resolve, 10))
  return props.topics.map((topic, index) => (
    <>
      {"\n"}
      {index + 1}. {topic}
    </>
  ))
}

/** Resolves its children to text first with evaluate(), then decides what to return. */
async function Shout(props: { children?: AmlRenderable }) {
  const text = await evaluate(props.children)
  return text.toUpperCase()
}

/** Evaluates two branches concurrently and composes the collected text. */
async function Report() {
  const [greeting, facts] = await Promise.all([
    evaluate(<Greeting name="AML" />),
    evaluate(<Facts topics={["components are functions", "async is native", "text is the result"]} />),
  ])
  return (
    <>
      <Shout>{greeting}</Shout>
      {`\nFacts (${facts.trim().split("\n").length}):`}
      {facts}
    </>
  )
}

const runtime = new AmlRuntime()
runtime.on("finish", (event) => {
  console.error(`[run ${event.runId.slice(0, 8)}] ${event.status}`)
})

const result = await runtime.evaluate(<Report />)
console.log(result)
