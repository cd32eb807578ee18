import { it } from "vitest"
import { z } from "zod"
import { AmlRuntime, Agent, Parallel, System, Tool, FollowUp, defineTool } from "@aml-jsx/sdk"
const t = defineTool({ name: "t", description: "d", input: z.object({}), execute: async () => 1 })
const p = { name: "p", async run(req: any) { return { text: `[${req.prompt}|${req.system}|${req.tools.length}|${req.followUps}]` } } }
const cases: [string, any][] = [
  ["system in branch", <Agent><Parallel><System>s</System>x</Parallel></Agent>],
  ["tool in branch", <Agent><Parallel><Tool use={t} />x</Parallel></Agent>],
  ["followup in branch", <Agent><Parallel><FollowUp>f</FollowUp>x</Parallel></Agent>],
  ["agent in branch", <Agent>o<Parallel><Agent><System>s</System><Tool use={t}/>i<FollowUp>f</FollowUp></Agent>y</Parallel></Agent>],
  ["top system", <Parallel><System>s</System></Parallel>],
  ["empty", <Parallel />],
  ["key", <Parallel key="k">a</Parallel>],
  ["depth", <Parallel>{["a", ["b", "c"]]}</Parallel>],
]
it("x", async () => {
  for (const [n, tree] of cases) {
    try { console.log(n, "=>", JSON.stringify(await new AmlRuntime({ agentProvider: p }).evaluate(tree))) } catch (e: any) { console.log(n, "!!", e.name, e.message) }
  }
  const A = () => "x"
  for (const d of [1, 2, 3]) try { console.log(d, await new AmlRuntime({ maxDepth: d }).evaluate(<Parallel><A /></Parallel>)) } catch (e: any) { console.log(d, e.message) }
})
