// `aml run examples/basic.tsx` — bottom-up evaluation with no model, network or files.
// Components are functions; children resolve before their parents, so <Shout> receives the
// already-resolved text of its children.
import { evaluate, type AmlRenderable } from "@aml-jsx/sdk"

function Greeting(props: { name: string }) {
  return `Hello, ${props.name}!`
}

async function Shout(props: { children?: AmlRenderable }) {
  const text = await evaluate(props.children)
  return text.toUpperCase()
}

function Steps(props: { items: readonly string[] }) {
  return props.items.map((item, index) => `${index + 1}. ${item}`).join("\n")
}

export default (
  <>
    <Shout>
      <Greeting name="AML" />
    </Shout>
    {"\n"}
    <Steps items={["components are functions", "children resolve first", "results flow up"]} />
  </>
)
