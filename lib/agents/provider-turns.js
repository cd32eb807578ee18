// createAgentProviderTurns (INVENTORY PA-5): the ordered turns of one Agent session,
// `[prompt, ...followUps]`. Only the final turn carries the structured-output request,
// because the schema applies to the answer the session ends with (AG-3).

function turn(index, isFinal, output, prompt) {
  const value = { index, isFinal }
  if (isFinal && output !== undefined) value.output = output
  value.prompt = prompt
  return Object.freeze(value)
}

/** The frozen turns of `request`; `providerName` labels the TypeErrors. */
export function createAgentProviderTurns(request, providerName) {
  // Each member is read once so a getter cannot answer differently to each check.
  const followUps = request.followUps
  const output = request.output
  const prompt = request.prompt
  if (followUps !== undefined && !Array.isArray(followUps)) {
    throw new TypeError(`Agent provider "${providerName}" followUps must be an array`)
  }
  const later = followUps === undefined ? [] : [...followUps]
  for (const followUp of later) {
    if (typeof followUp !== "string" || followUp.length === 0) {
      throw new TypeError(`Agent provider "${providerName}" followUps must contain non-empty strings`)
    }
  }
  const count = later.length + 1
  const turns = [turn(0, count === 1, output, prompt)]
  for (let index = 1; index < count; index++) {
    turns.push(turn(index, index === count - 1, output, later[index - 1]))
  }
  return Object.freeze(turns)
}
